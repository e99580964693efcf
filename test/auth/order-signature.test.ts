// order.signature of POST /v1/rfq (interface.md Order; contract section 2): any text that is not base64 of
// 65 bytes, the empty string and a long one included, is 400 INVALID_SIGNATURE and creates nothing; only a
// string past the schema's 512-character bound, no signature in any encoding, is 400 VALIDATION_FAILED.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { validationFailed } from '../helpers/errors.js';
import { client } from '../helpers/http.js';
import { createMarket } from '../helpers/markets.js';
import { signedOrder } from '../helpers/rfq.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { credit, loginWallet, type TestUser } from '../helpers/users.js';

const FUNDS_MICROS = 10_000_000;

describe('order.signature encoding', () => {
  let server: TestServer;
  let user: TestUser;
  let market: number;
  let nonce = 1;

  before(async () => {
    server = await startServer();
    user = await loginWallet(server);
    await credit(server, user.address, FUNDS_MICROS);
    market = (await createMarket(server)).market_id;
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  const order = () =>
    signedOrder(user.wallet, {
      wager_micros: 2_000_000,
      min_odds: 1.5,
      legs: [{ market_id: market, direction: 'up' }],
      nonce: nonce++,
      expires_at_ms: Date.now() + 60_000,
      shield_on: false,
    });

  it('a signature that is not base64 of 65 bytes is 400 INVALID_SIGNATURE, and nothing is reserved', async () => {
    const signed = await order();
    const sig65 = Buffer.from(signed.signature, 'base64');
    const malformed = {
      empty: '',
      'base64 of 64 bytes': sig65.subarray(0, 64).toString('base64'),
      'base64 of 66 bytes': Buffer.concat([sig65, Buffer.from([0])]).toString('base64'),
      'hex instead of base64': '0x' + sig65.toString('hex'),
      'base64url instead of base64': sig65.toString('base64url'),
      '200 characters': signed.signature.repeat(3).slice(0, 200),
      '201 characters': signed.signature.repeat(3).slice(0, 201),
      '512 characters': 'A'.repeat(512),
    };
    for (const [name, signature] of Object.entries(malformed)) {
      const res = await client(server.baseUrl, user.token).post('/v1/rfq', { order: { ...signed, signature } });
      assert.deepEqual(
        { status: res.status, body: res.body },
        { status: 400, body: { code: 'INVALID_SIGNATURE', message: 'signature is not base64 of 65 bytes' } },
        name,
      );
    }
    const balance = await client(server.baseUrl, user.token).get('/v1/user/balance');
    assert.deepEqual(balance.body, {
      available_micros: String(FUNDS_MICROS),
      reserved_micros: '0',
      at_risk_micros: '0',
      pending_withdrawal_micros: '0',
    });
  });

  it('a signature over 512 characters is 400 VALIDATION_FAILED', async () => {
    const signed = await order();
    const res = await client(server.baseUrl, user.token).post('/v1/rfq', { order: { ...signed, signature: 'A'.repeat(513) } });
    assert.deepEqual(
      { status: res.status, body: res.body },
      validationFailed('/order/signature', 'Expected string length less or equal to 512'),
    );
  });
});
