// The one error assertion of the tests: an answer is the contract's error (section 2) with a given status and
// code: the body is an ErrorBody (src/contract/common.ts: `code`, a `message`, optional `details`).
import assert from 'node:assert/strict';
import type { Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ErrorBody } from '../../src/contract/common.js';

export type ApiErrorBody = Static<typeof ErrorBody>;
export type ErrorDetail = NonNullable<ApiErrorBody['details']>[number];

/**
 * Asserts `res` has `status` and an error body with `code` that matches the ErrorBody schema; with
 * `details`, the body's details are exactly those. Returns the body for further checks of its message.
 */
export function assertApiError(
  res: { status: number; body: unknown },
  status: number,
  code: string,
  details?: readonly ErrorDetail[],
): ApiErrorBody {
  const shown = JSON.stringify(res.body);
  assert.deepEqual({ status: res.status, code: (res.body as { code?: unknown } | null)?.code }, { status, code }, shown);
  assert.ok(Value.Check(ErrorBody, res.body), `not an ErrorBody: ${shown}`);
  const body = res.body as ApiErrorBody;
  if (details !== undefined) assert.deepEqual(body.details, details, shown);
  return body;
}

/** The whole 400 response (status and body) for a validation failure with one detail (contract section 2). */
export function validationFailed(path: string, message: string) {
  return { status: 400, body: { code: 'VALIDATION_FAILED', message: 'request failed validation', details: [{ path, message }] } };
}
