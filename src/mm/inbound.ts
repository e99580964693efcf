// Main thread. Turns one frame from a maker into a typed message or a coded error (contract section 7:
// a malformed message gets `error` with a code and the socket stays open). Pure; the validators are the
// schemas of schemas/mm.ts, compiled once at load.
import { ValueErrorType } from '@sinclair/typebox/errors';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { TSchema } from '@sinclair/typebox';
import { MAKER_TO_SERVER_SCHEMAS, messageTypeOf, type ErrorMessage, type MakerToServerMessage } from '../schemas/mm.js';

export type InboundError = Omit<ErrorMessage, 'type' | 'code'> & { code: 'INVALID_JSON' | 'UNKNOWN_TYPE' | 'VALIDATION_FAILED' };

export type Inbound = { ok: true; message: MakerToServerMessage } | { ok: false; error: InboundError };

const MAX_DETAILS = 5;
const MAX_ECHO_CHARS = 64;

const checks = new Map<string, TypeCheck<TSchema>>(
  MAKER_TO_SERVER_SCHEMAS.map((schema) => [messageTypeOf(schema), TypeCompiler.Compile(schema)]),
);
// fatal: a frame that is not valid UTF-8 is refused rather than silently repaired into different text.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes a frame to a JSON object; null when it is binary, not UTF-8, not JSON, or not an object. */
export function decodeFrame(frame: ArrayBuffer, isBinary: boolean): Record<string, unknown> | null {
  if (isBinary) return null;
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(frame));
  } catch {
    return null; // a client's bad bytes: an expected outcome, answered with INVALID_JSON by the caller
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** Validates a decoded maker message against the schema of its `type`. */
export function validateMakerMessage(value: Record<string, unknown>): Inbound {
  const type = value['type'];
  const check = typeof type === 'string' ? checks.get(type) : undefined;
  if (check === undefined) {
    return { ok: false, error: { code: 'UNKNOWN_TYPE', message: 'type is missing or not a maker message type', ...echoIds(value) } };
  }
  if (check.Check(value)) return { ok: true, message: value as MakerToServerMessage };
  const details: { path: string; message: string }[] = [];
  for (const error of check.Errors(value)) {
    // A custom kind (odds) reports "Expected kind ..."; its description states the actual rule.
    const message = error.type === ValueErrorType.Kind && typeof error.schema.description === 'string' ? error.schema.description : error.message;
    details.push({ path: error.path === '' ? '/' : error.path, message });
    if (details.length === MAX_DETAILS) break;
  }
  return { ok: false, error: { code: 'VALIDATION_FAILED', message: `${String(type)} failed validation`, details, ...echoIds(value) } };
}

/** request_id and quote_id of the offending message, so a bot can tell which quote failed. */
function echoIds(value: Record<string, unknown>): { request_id?: string; quote_id?: string } {
  const out: { request_id?: string; quote_id?: string } = {};
  const requestId = value['request_id'];
  const quoteId = value['quote_id'];
  if (typeof requestId === 'string' && requestId.length <= MAX_ECHO_CHARS) out.request_id = requestId;
  if (typeof quoteId === 'string' && quoteId.length <= MAX_ECHO_CHARS) out.quote_id = quoteId;
  return out;
}
