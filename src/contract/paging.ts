// Main thread; pure but for the key it is given. The one paging convention of every list (contract section
// 13): `limit` (1..max, each route states its max and default), an opaque `cursor`, and `next_cursor` in the
// answer (null on the last page). A cursor is bound to its route, its filter and its caller: one this route
// did not issue, issued for another filter or to another caller, or altered, is 400 VALIDATION_FAILED at
// /cursor and shows nothing.
//
// What a cursor is (unauthenticated cursors let a caller start a range read inside another
// account's keys and read its rows):
//
//   cursor = base64url( tag (16 bytes) || JSON [routeTag, filterTag, ...position] )
//   tag    = HMAC-SHA256(key, "parlayd:cursor:v1" || JSON [route, caller, filter] || "\n" || JSON body)[0..16]
//
// - The position is the sort key of the last item of the page (a keyset cursor: the next page starts
//   strictly after it). Only this key can make a tag, so a position in a cursor that verifies is one this
//   route handed to this caller for this filter: a range read can start only where the caller's own walk
//   could have reached.
// - route: the route's method and path; caller: the principal (a user id, a maker address, the admin, or
//   "anonymous" on a public list); filter: every path parameter and query value but `limit` and `cursor`, in
//   name order (routeFilter). Derived here and in exchange.ts from the request, never passed by a handler,
//   so no route can forget to bind one of them.
// - routeTag and filterTag (36 and 64 bits of an unkeyed SHA-256 of each) are in the clear only to tell a
//   client its mistake (another route, another filter, another caller or altered); the tag covers them too.
// - The key: 32 random bytes per data directory, kept in LMDB `meta` (store/data-key.ts), so a cursor
//   survives a restart. Verified with timingSafeEqual. Cost: one HMAC to read a cursor and one to issue the
//   next, per page, never per row (docs/performance.md "Public lists").
// - Canonical form only: the text must be exactly what encoding its bytes gives back, so padding or stray
//   bits are refused as "not issued here" rather than half-understood.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { errors } from '../lib/errors.js';
import { Nullable } from './common.js';
import type { Principal } from './principal.js';

/**
 * Longest cursor accepted (characters). The longest this service issues is an admin entries cursor (~170:
 * a 16-byte tag, the route and filter tags and an 84-character entry key, in base64url); 512 leaves room for a longer
 * position without letting a query string carry kilobytes into a JSON.parse.
 */
export const MAX_CURSOR_CHARS = 512;

/** Bytes of the HMAC kept: forging a tag is 2^128 guesses. */
const TAG_BYTES = 16;
/** Bytes of the cursor key (store/data-key.ts makes it). */
export const CURSOR_KEY_BYTES = 32;
/** Domain separation: this key MACs cursors and nothing else. */
const MAC_DOMAIN = 'parlayd:cursor:v1';
/** 36 and 64 bits of SHA-256: tags that tell routes and filters apart, not secrets. */
const ROUTE_TAG_CHARS = 6;
const FILTER_TAG_CHARS = 11;
/** Query names that page rather than filter. */
const PAGE_NAMES: ReadonlySet<string> = new Set(['limit', 'cursor']);

/** One value of a position: cursors hold sort keys, which are integers or strings. */
export type PositionValue = string | number;

/**
 * What a cursor is bound to: the route, the caller and the filter, each as canonical text; with the clear
 * tags and the MAC's prefix worked out once (a request reads one cursor and issues one).
 */
export class CursorBinding {
  readonly routeTag: string;
  readonly filterTag: string;
  readonly macPrefix: string;

  constructor(route: string, caller: string, filter: string, routeTag = routeTagOf(route)) {
    this.routeTag = routeTag;
    this.filterTag = clearTag(filter, FILTER_TAG_CHARS);
    this.macPrefix = `${MAC_DOMAIN}${JSON.stringify([route, caller, filter])}\n`;
  }
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
        description:
          'next_cursor of the previous page of the same route and filter, as issued to the same caller (opaque); absent: the first page',
      }),
    ),
  };
}

/** The answer's `next_cursor` (spread into its response schema). */
export const nextCursorProperty = {
  next_cursor: Nullable(Type.String({ description: 'cursor of the next page (same route, filter and caller); null on the last page' })),
};

/** Who a cursor is issued to. A user by id (any of its sessions), a maker by address, the one admin. */
export function callerOf(auth: Principal | null): string {
  if (auth === null) return 'anonymous';
  if (auth.kind === 'user') return `user:${auth.userId}`;
  if (auth.kind === 'maker') return `maker:${auth.address}`;
  return 'admin';
}

/**
 * A request's filter as canonical text: its path parameters and its query values but `limit` and `cursor`,
 * by name. An empty value is no filter (contract section 8 writes `?status=&category=`), as if absent.
 */
export function routeFilter(params: unknown, query: unknown): string {
  const pairs: [string, unknown][] = [];
  for (const [prefix, values] of [
    ['params.', params],
    ['query.', query],
  ] as const) {
    if (typeof values !== 'object' || values === null) continue;
    for (const name of Object.keys(values).sort()) {
      const value = (values as Record<string, unknown>)[name];
      if (value === undefined || value === '' || (prefix === 'query.' && PAGE_NAMES.has(name))) continue;
      pairs.push([prefix + name, value]);
    }
  }
  return JSON.stringify(pairs);
}

/** Makes and checks cursors under one data directory's key. */
export class CursorCodec {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    assert.equal(key.length, CURSOR_KEY_BYTES, 'a cursor key is 32 bytes');
    this.#key = key;
  }

  encode(binding: CursorBinding, position: readonly PositionValue[]): string {
    const body = Buffer.from(JSON.stringify([binding.routeTag, binding.filterTag, ...position]), 'utf8');
    return Buffer.concat([this.#tag(binding, body), body]).toString('base64url');
  }

  /**
   * The position a cursor holds, checked by `isPosition` (the route's sort key shape), or null for no cursor.
   * Throws VALIDATION_FAILED at /cursor for text that is not a cursor this route issued to this caller for
   * this filter, unaltered.
   */
  decode<P extends readonly PositionValue[]>(
    binding: CursorBinding,
    cursor: string | undefined,
    isPosition: (values: readonly unknown[]) => values is P,
  ): P | null {
    if (cursor === undefined) return null;
    if (cursor.length > MAX_CURSOR_CHARS) throw errors.cursorNotOfRoute();
    const bytes = Buffer.from(cursor, 'base64url');
    if (bytes.length <= TAG_BYTES || bytes.toString('base64url') !== cursor) throw errors.cursorNotOfRoute();
    const body = bytes.subarray(TAG_BYTES);
    let parts: unknown;
    try {
      parts = JSON.parse(body.toString('utf8'));
    } catch {
      throw errors.cursorNotOfRoute();
    }
    if (!Array.isArray(parts) || parts[0] !== binding.routeTag) throw errors.cursorNotOfRoute();
    if (parts[1] !== binding.filterTag) throw errors.cursorOfOtherFilter();
    if (!timingSafeEqual(bytes.subarray(0, TAG_BYTES), this.#tag(binding, body))) throw errors.cursorOfOtherCaller();
    const position = parts.slice(2);
    // Only this route issues under this binding, so a bad shape here is a route that changed its sort key.
    if (!isPosition(position)) throw errors.cursorNotOfRoute();
    return position;
  }

  #tag(binding: CursorBinding, body: Buffer): Buffer {
    return createHmac('sha256', this.#key).update(binding.macPrefix).update(body).digest().subarray(0, TAG_BYTES);
  }
}

/** A route's paging, made once at start: its codec and its name in cursors (server.ts compiles it). */
export class RoutePaging {
  readonly routeTag: string;

  constructor(
    readonly codec: CursorCodec,
    readonly route: string,
  ) {
    this.routeTag = routeTagOf(route);
  }
}

/**
 * One request's paging (RequestContext.paging): reads its `cursor` and issues `next_cursor`, both bound to
 * its route, caller and filter, which it takes from the request itself.
 */
export class Paging {
  readonly #paging: RoutePaging;
  readonly #binding: CursorBinding;
  readonly #cursor: string | undefined;

  constructor(paging: RoutePaging, auth: Principal | null, params: unknown, query: unknown) {
    this.#paging = paging;
    this.#binding = new CursorBinding(paging.route, callerOf(auth), routeFilter(params, query), paging.routeTag);
    const cursor = (query as { cursor?: unknown } | null)?.cursor;
    this.#cursor = typeof cursor === 'string' ? cursor : undefined;
  }

  /** The position of the request's cursor (null without one); 400 at /cursor for a cursor not issued for it. */
  after<P extends readonly PositionValue[]>(isPosition: (values: readonly unknown[]) => values is P): P | null {
    return this.#paging.codec.decode(this.#binding, this.#cursor, isPosition);
  }

  /** The next_cursor after `position`, the page's last sort key; null on the last page. */
  next(position: readonly PositionValue[] | null): string | null {
    return position === null ? null : this.#paging.codec.encode(this.#binding, position);
  }
}

/** Position guards for the common sort keys. */
export const isSafeIntegers =
  (count: number) =>
  (values: readonly unknown[]): values is number[] =>
    values.length === count && values.every((v) => Number.isSafeInteger(v) && (v as number) >= 0);

export const isOneString = (values: readonly unknown[]): values is [string] => values.length === 1 && typeof values[0] === 'string';

/** The position of a list sorted by one key: the page's last key, or null (no key) on the last page. */
export const positionOf = <V extends PositionValue>(key: V | null): [V] | null => (key === null ? null : [key]);

function routeTagOf(route: string): string {
  return clearTag(route, ROUTE_TAG_CHARS);
}

function clearTag(text: string, chars: number): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, chars);
}
