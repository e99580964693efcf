// The maker socket's `error` messages come from one table (contract/maker-protocol.ts MAKER_ERRORS) through its factories;
// these pin their text and field order, which reach the maker byte for byte.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAKER_ERRORS, makerError, validationFailedError } from '../../src/contract/maker-protocol.js';
import { validateMakerMessage } from '../../src/mm/inbound.js';

const REQUEST_ID = '3f1c2a9e-8b7d-4c6a-9e2f-1a2b3c4d5e6f';

describe('maker error factories', () => {
  it('makerError: the table text, then the ids the offending message had, in wire order', () => {
    assert.equal(
      JSON.stringify(makerError('QUOTE_NOT_FOUND', REQUEST_ID, 'q-1')),
      `{"type":"error","code":"QUOTE_NOT_FOUND","message":"${MAKER_ERRORS.QUOTE_NOT_FOUND.message}","request_id":"${REQUEST_ID}","quote_id":"q-1"}`,
    );
    assert.equal(
      JSON.stringify(makerError('INVALID_JSON')),
      `{"type":"error","code":"INVALID_JSON","message":"${MAKER_ERRORS.INVALID_JSON.message}"}`,
    );
  });

  it('validationFailedError names the message type; details come before the ids', () => {
    const details = [{ path: '/odds', message: 'at most 4 decimals' }];
    assert.equal(
      JSON.stringify(validationFailedError('quote', details, REQUEST_ID)),
      `{"type":"error","code":"VALIDATION_FAILED","message":"quote failed validation","details":[{"path":"/odds","message":"at most 4 decimals"}],"request_id":"${REQUEST_ID}"}`,
    );
    assert.equal(MAKER_ERRORS.VALIDATION_FAILED.message, 'message failed validation');
  });

  it('an unknown type is UNKNOWN_TYPE with the table text and the echoed ids; an id over 64 chars is not echoed', () => {
    assert.deepEqual(validateMakerMessage({ type: 'bid', request_id: REQUEST_ID, quote_id: 'x'.repeat(65) }), {
      ok: false,
      error: { type: 'error', code: 'UNKNOWN_TYPE', message: MAKER_ERRORS.UNKNOWN_TYPE.message, request_id: REQUEST_ID },
    });
  });
});
