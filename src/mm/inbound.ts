// Main thread. Turns one frame from a maker into a typed message or the `error` message to answer it with
// (contract section 7: a malformed message gets `error` with a code and the socket stays open). Pure; the
// validators are the schemas of contract/mm.ts, compiled once at load; the errors come from protocol.ts.
import { ValueErrorType } from '@sinclair/typebox/errors';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { TSchema } from '@sinclair/typebox';
import { MAKER_TO_SERVER_SCHEMAS, messageTypeOf, type ErrorMessage, type MakerToServerMessage } from '../contract/mm.js';
import { makerError, validationFailedError, type MakerErrorDetail } from '../contract/maker-protocol.js';

export type Inbound = { ok: true; message: MakerToServerMessage } | { ok: false; error: ErrorMessage };

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
  return isMakerMessage(value) ? { ok: true, message: value } : { ok: false, error: makerMessageError(value) };
}

/**
 * The socket's hot path (dispatch.ts): true when `value` passes the compiled schema of its `type`, the one
 * check a message gets on its way; nothing is allocated. On false, makerMessageError says why.
 */
export function isMakerMessage(value: Record<string, unknown>): value is MakerToServerMessage {
  const type = value['type'];
  const check = typeof type === 'string' ? checks.get(type) : undefined;
  return check !== undefined && check.Check(value);
}

/** The `error` answering a message that isMakerMessage refused: UNKNOWN_TYPE or VALIDATION_FAILED with details. */
export function makerMessageError(value: Record<string, unknown>): ErrorMessage {
  const type = value['type'];
  const check = typeof type === 'string' ? checks.get(type) : undefined;
  if (check === undefined) return makerError('UNKNOWN_TYPE', echoedId(value, 'request_id'), echoedId(value, 'quote_id'));
  const details: MakerErrorDetail[] = [];
  for (const error of check.Errors(value)) {
    // A custom kind (odds) reports "Expected kind ..."; its description states the actual rule.
    const message =
      error.type === ValueErrorType.Kind && typeof error.schema.description === 'string' ? error.schema.description : error.message;
    details.push({ path: error.path === '' ? '/' : error.path, message });
    if (details.length === MAX_DETAILS) break;
  }
  return validationFailedError(type as string, details, echoedId(value, 'request_id'), echoedId(value, 'quote_id'));
}

/** request_id or quote_id of the offending message, if it is a string short enough to echo back. */
function echoedId(value: Record<string, unknown>, field: 'request_id' | 'quote_id'): string | undefined {
  const id = value[field];
  return typeof id === 'string' && id.length <= MAX_ECHO_CHARS ? id : undefined;
}
