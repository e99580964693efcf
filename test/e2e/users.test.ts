// Balances and admin funding (contract section 4): a new user's balance, credits (creating the user of an
// unknown wallet), idempotency by key, and the money input rules of contract section 1 (safe integers only).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { validationFailed } from '../helpers/errors.js';
import { client } from '../helpers/http.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { breakChecksum, loginWallet } from '../helpers/users.js';

const ZERO_BALANCE = { available_micros: '0', reserved_micros: '0', at_risk_micros: '0', pending_withdrawal_micros: '0' };
const available = (micros: string) => ({
  available_micros: micros,
  reserved_micros: '0',
  at_risk_micros: '0',
  pending_withdrawal_micros: '0',
});
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('balances and admin credit', () => {
  let server: TestServer;
  let admin: ReturnType<typeof client>;

  before(async () => {
    server = await startServer();
    admin = client(server.baseUrl, server.adminToken);
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  async function balanceOf(token: string) {
    const res = await client(server.baseUrl, token).get('/v1/user/balance');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  }

  async function creditRaw(body: unknown) {
    const res = await admin.post('/v1/admin/users/credit', body);
    return { status: res.status, body: res.body };
  }

  it("a new user's balance is zero in all four buckets, as decimal strings", async () => {
    const user = await loginWallet(server);
    assert.deepEqual(await balanceOf(user.token), ZERO_BALANCE);
  });

  it('admin credit funds a user and answers the credit and the new balance', async () => {
    const user = await loginWallet(server);
    const res = await creditRaw({ wallet: user.address, amount_micros: 5_000_000, idempotency_key: randomUUID() });
    assert.deepEqual(res, {
      status: 200,
      body: { user_id: user.userId, wallet: user.address, credited_micros: '5000000', balance: available('5000000') },
    });
    assert.deepEqual(await balanceOf(user.token), available('5000000'));
  });

  it('credits with different keys add up', async () => {
    const user = await loginWallet(server);
    for (const amount of [1, 2_000_000, 30]) {
      await creditRaw({ wallet: user.address, amount_micros: amount, idempotency_key: randomUUID() });
    }
    assert.deepEqual(await balanceOf(user.token), available('2000031'));
  });

  it('credit to an unknown wallet creates its user, whom the first login then finds', async () => {
    const wallet = Wallet.createRandom();
    const res = await creditRaw({ wallet: wallet.address, amount_micros: 7_000_000, idempotency_key: randomUUID() });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.match(res.body.user_id, UUID_RE);
    assert.equal(res.body.wallet, wallet.address.toLowerCase());
    const user = await loginWallet(server, wallet);
    assert.equal(user.userId, res.body.user_id);
    assert.deepEqual(await balanceOf(user.token), available('7000000'));
  });

  it('a repeated credit with the same idempotency key and content credits once and answers the same', async () => {
    const user = await loginWallet(server);
    const request = { wallet: user.address, amount_micros: 3_000_000, idempotency_key: randomUUID() };
    const first = await creditRaw(request);
    assert.equal(first.status, 200);
    // The key's content is the wallet, not its spelling: the checksummed form is the same request.
    const second = await creditRaw({ ...request, wallet: user.wallet.address });
    assert.deepEqual(second, first);
    assert.deepEqual(await balanceOf(user.token), available('3000000'));
  });

  it('the same idempotency key with another amount is 409 IDEMPOTENCY_CONFLICT and credits nothing', async () => {
    const user = await loginWallet(server);
    const key = randomUUID();
    assert.equal((await creditRaw({ wallet: user.address, amount_micros: 1_000_000, idempotency_key: key })).status, 200);
    const conflict = await creditRaw({ wallet: user.address, amount_micros: 2_000_000, idempotency_key: key });
    assert.deepEqual(conflict, {
      status: 409,
      body: { code: 'IDEMPOTENCY_CONFLICT', message: 'idempotency key reused with different content' },
    });
    assert.deepEqual(await balanceOf(user.token), available('1000000'));
  });

  it('the same idempotency key for another wallet is 409 IDEMPOTENCY_CONFLICT', async () => {
    const first = await loginWallet(server);
    const other = await loginWallet(server);
    const key = randomUUID();
    assert.equal((await creditRaw({ wallet: first.address, amount_micros: 1_000_000, idempotency_key: key })).status, 200);
    const conflict = await creditRaw({ wallet: other.address, amount_micros: 1_000_000, idempotency_key: key });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.code, 'IDEMPOTENCY_CONFLICT');
    assert.deepEqual(await balanceOf(other.token), ZERO_BALANCE);
  });

  it('concurrent credits with one idempotency key credit once', async () => {
    const user = await loginWallet(server);
    const request = { wallet: user.address, amount_micros: 4_000_000, idempotency_key: randomUUID() };
    const results = await Promise.all(Array.from({ length: 8 }, () => creditRaw(request)));
    for (const res of results) assert.deepEqual(res, results[0]);
    assert.equal(results[0]?.status, 200);
    assert.deepEqual(await balanceOf(user.token), available('4000000'));
  });

  it('amounts up to 2^53-1 are exact, and balances past it stay exact', async () => {
    const user = await loginWallet(server);
    await creditRaw({ wallet: user.address, amount_micros: Number.MAX_SAFE_INTEGER, idempotency_key: randomUUID() });
    await creditRaw({ wallet: user.address, amount_micros: 2, idempotency_key: randomUUID() });
    assert.deepEqual(await balanceOf(user.token), available('9007199254740993'));
  });

  it('amount_micros that is not a safe integer, sent as raw JSON text, is 400 VALIDATION_FAILED', async () => {
    const user = await loginWallet(server);
    for (const amountText of ['9007199254740993', '9007199254740992', '1e300']) {
      const res = await admin.post('/v1/admin/users/credit', undefined, {
        rawBody: `{"wallet":"${user.address}","amount_micros":${amountText},"idempotency_key":"${randomUUID()}"}`,
        headers: { 'content-type': 'application/json' },
      });
      assert.deepEqual({ status: res.status, body: res.body }, validationFailed('/amount_micros', 'Expected union value'), amountText);
    }
    assert.deepEqual(await balanceOf(user.token), ZERO_BALANCE);
  });

  it('amount_micros that is zero, negative, fractional, or a string not of a positive safe integer is 400 VALIDATION_FAILED', async () => {
    const user = await loginWallet(server);
    const cases: Array<[unknown, string]> = [
      [0, 'Expected union value'],
      [-5, 'Expected union value'],
      [1.5, 'Expected union value'],
      ['0', 'Expected union value'],
      ['0100', 'Expected union value'],
      ['-5', 'Expected union value'],
      ['1e6', 'Expected union value'],
      [' 5', 'Expected union value'],
      ['9007199254740992', 'Expected at most 9007199254740991'],
      ['99999999999999999', 'Expected union value'],
    ];
    for (const [amount, message] of cases) {
      const res = await creditRaw({ wallet: user.address, amount_micros: amount, idempotency_key: randomUUID() });
      assert.deepEqual(res, validationFailed('/amount_micros', message), JSON.stringify(amount));
    }
    assert.deepEqual(await balanceOf(user.token), ZERO_BALANCE);
  });

  it('amount_micros as a decimal string (the contract form of the money fields it adds) credits as the same integer does', async () => {
    const user = await loginWallet(server);
    const key = randomUUID();
    const first = await creditRaw({ wallet: user.address, amount_micros: '9007199254740991', idempotency_key: key });
    assert.equal(first.status, 200);
    assert.equal((first.body as { credited_micros: string }).credited_micros, '9007199254740991');
    // One key, one amount: the string and the integer are the same credit, so this is a replay.
    const replay = await creditRaw({ wallet: user.address, amount_micros: 9007199254740991, idempotency_key: key });
    assert.equal(replay.status, 200);
    assert.deepEqual(await balanceOf(user.token), available('9007199254740991'));
  });

  it('a credit wallet with a bad EIP-55 checksum is 400 VALIDATION_FAILED', async () => {
    const res = await creditRaw({
      wallet: breakChecksum(Wallet.createRandom().address),
      amount_micros: 1,
      idempotency_key: randomUUID(),
    });
    assert.deepEqual(res, validationFailed('/wallet', 'bad EIP-55 checksum'));
  });

  it('a credit without an idempotency key, or with an unknown field, is 400 VALIDATION_FAILED', async () => {
    const wallet = Wallet.createRandom().address;
    const missing = await creditRaw({ wallet, amount_micros: 1 });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, {
      code: 'VALIDATION_FAILED',
      message: 'request failed validation',
      details: [
        { path: '/idempotency_key', message: 'Expected required property' },
        { path: '/idempotency_key', message: 'Expected string' },
      ],
    });
    const unknown = await creditRaw({ wallet, amount_micros: 1, idempotency_key: randomUUID(), memo: 'hi' });
    assert.deepEqual(unknown, validationFailed('/memo', 'Unexpected property'));
  });
});
