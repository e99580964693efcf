// Main thread; pure. The one paging convention of every list (contract section 13): `limit` (1..max, each
// route states its max and default), an opaque `cursor`, and `next_cursor` in the answer (null on the last
// page). A cursor this route did not issue, or issued for another filter, is 400 VALIDATION_FAILED at
// /cursor.
//
// What a cursor is: base64url of the JSON array [route tag, filter tag, ...position], where the position is
// the sort key of the last item of the page (a keyset cursor: the next page starts strictly after it), and
// the filter tag is a short hash of the query's filter (status, category, a contest id...). Decisions:
// - No signature. A cursor only says where to start reading in an order anyone may read from its start, so a
//   forged position gains a caller nothing it could not get by paging; what the checks are for is telling a
//   client its mistake (a cursor from another route or filter, a truncated one) instead of answering a page
//   of something else. An HMAC would add a key to keep and would not make any list more private.
// - No per-process state, so a cursor survives a restart for free (its position is a durable sort key).
// - Canonical form only: the text must be exactly what encodeCursor makes of what it decodes to, so padding,
//   whitespace or a re-ordered JSON is refused as "not issued here" rather than half-understood.
import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { errors } from '../errors.js';
import { Nullable } from '../schemas/common.js';

/**
 * Longest cursor accepted (characters). The longest this service issues is an admin entries cursor (~170:
 * route and filter tags and an 83-character entry key, as JSON in base64url); 512 leaves room for a longer
 * position without letting a query string carry kilobytes into a JSON.parse.
 */
export const MAX_CURSOR_CHARS = 512;

/** 64 bits of SHA-256: a tag that tells filters apart, not a secret. */
const FILTER_TAG_CHARS = 11;

/** One value of a position: cursors hold sort keys, which are integers or strings. */
export type PositionValue = string | number;

/** Which list a cursor belongs to: the route's tag and the filter of the query that issued it. */
export interface CursorScope {
  readonly route: string;
  /** The query's filter values in a fixed order; `null` for a filter that is absent. */
  readonly filter: readonly (string | number | null)[];
}

/** A route's `limit` and `cursor` query parameters (spread into its query schema). */
export function pageQueryProperties(page: { maxLimit: number; defaultLimit: number }) {
  return {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: page.maxLimit,
        description: `items in the page, 1..${page.maxLimit} (default ${page.defaultLimit})`,
      }),
    ),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_CURSOR_CHARS,
        pattern: '^[A-Za-z0-9_-]+$',
        description: 'next_cursor of the previous page of the same route and filter (opaque); absent: the first page',
      }),
    ),
  };
}

/** The answer's `next_cursor` (spread into its response schema). */
export const nextCursorProperty = {
  next_cursor: Nullable(Type.String({ description: 'cursor of the next page (same route and filter); null on the last page' })),
};

export function encodeCursor(scope: CursorScope, position: readonly PositionValue[]): string {
  return Buffer.from(JSON.stringify([scope.route, filterTag(scope), ...position]), 'utf8').toString('base64url');
}

/**
 * The position a cursor holds, checked by `isPosition` (the route's sort key shape), or null for no cursor.
 * Throws VALIDATION_FAILED at /cursor for text that is not a cursor this scope's route issued, or one it
 * issued for another filter.
 */
export function decodeCursor<P extends readonly PositionValue[]>(
  scope: CursorScope,
  cursor: string | undefined,
  isPosition: (values: readonly unknown[]) => values is P,
): P | null {
  if (cursor === undefined) return null;
  const parts = parseCanonical(cursor);
  if (parts === null || parts[0] !== scope.route) throw errors.cursorNotOfRoute();
  if (parts[1] !== filterTag(scope)) throw errors.cursorOfOtherFilter();
  const position = parts.slice(2);
  if (!isPosition(position)) throw errors.cursorNotOfRoute();
  return position;
}

/** Position guards for the common sort keys. */
export const isSafeIntegers =
  (count: number) =>
  (values: readonly unknown[]): values is number[] =>
    values.length === count && values.every((v) => Number.isSafeInteger(v) && (v as number) >= 0);

export const isOneString = (values: readonly unknown[]): values is [string] => values.length === 1 && typeof values[0] === 'string';

/** The decoded array of a cursor in canonical form, or null. */
function parseCanonical(cursor: string): unknown[] | null {
  if (cursor.length > MAX_CURSOR_CHARS) return null;
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(parts) || parts.length < 2) return null;
  if (Buffer.from(JSON.stringify(parts), 'utf8').toString('base64url') !== cursor) return null;
  return parts;
}

function filterTag(scope: CursorScope): string {
  return createHash('sha256').update(JSON.stringify(scope.filter)).digest('base64url').slice(0, FILTER_TAG_CHARS);
}
