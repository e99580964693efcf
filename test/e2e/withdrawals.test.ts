// Withdrawals (contract section 11) against the real server: the request moves available to
// pending_withdrawal, idempotent by key; the operator's complete (money leaves: withdrawn) and fail (back to
// available) are final; lists page; withdrawals racing RFQs for the same balance never spend it twice. The
// ledger check runs after each test and when the server stops.
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { assertApiError } from '../helpers/errors.js';
import { admin, client } from '../helpers/http.js';
import { connectMaker, registerMaker } from '../helpers/makers.js';
import { createMarket } from '../helpers/markets.js';
import { autoQuote, balanceOf, unsignedBody } from '../helpers/rfq.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { fundedUser } from '../helpers/users.js';

const USDC = 1_000_000;
const DESTINATION = `0x${'5a'.repeat(20)}`;

let server: TestServer;
before(async () => {
  server = await startServer({ env: { PARLAYD_SHARDS: '2' } });
});
after(async () => {
  await server.stop();
});

async function ledgerCheck() {
  const res = await admin(server).get('/v1/admin/ledger/check');
  assert.equal(res.body.ok, true, JSON.stringify(res.body));
  return { withdrawn: BigInt(res.body.withdrawn_micros), total: BigInt(res.body.total_micros), credited: BigInt(res.body.credited_micros) };
}

const withdrawal = (amount: number, key = randomUUID()) => ({ amount_micros: amount, destination: DESTINATION, idempotency_key: key });

describe("a user's withdrawal", () => {
  it('is pending with its amount held; a replay answers it, other content conflicts, a shortfall is refused', async () => {
    const user = await fundedUser(server, 10 * USDC);
    const api = client(server.baseUrl, user.token);
    const key = randomUUID();
    const created = await api.post('/v1/user/withdrawals', withdrawal(4 * USDC, key));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(Object.keys(created.body).sort(), [
      'amount_micros',
      'created_at_ms',
      'destination',
      'finished_at_ms',
      'status',
      'withdrawal_id',
    ]);
    assert.deepEqual(
      [created.body.status, created.body.amount_micros, created.body.destination],
      ['pending', String(4 * USDC), DESTINATION],
    );
    const replay = await api.post('/v1/user/withdrawals', withdrawal(4 * USDC, key));
    assert.deepEqual([replay.status, replay.body], [200, created.body]);
    assert.equal((await api.post('/v1/user/withdrawals', withdrawal(5 * USDC, key))).body.code, 'IDEMPOTENCY_CONFLICT');
    const short = await api.post('/v1/user/withdrawals', withdrawal(6 * USDC + 1));
    assert.deepEqual([short.status, short.body.code], [422, 'INSUFFICIENT_BALANCE']);
    const balance = (await api.get('/v1/user/balance')).body;
    assert.deepEqual(balance, {
      available_micros: String(6 * USDC),
      reserved_micros: '0',
      at_risk_micros: '0',
      pending_withdrawal_micros: String(4 * USDC),
    });
    const bad = await api.post('/v1/user/withdrawals', { ...withdrawal(1), destination: 'not-an-address' });
    assert.deepEqual([bad.status, bad.body.code], [400, 'VALIDATION_FAILED']);
    await ledgerCheck();
  });

  it('completed, the money has left (withdrawn); failed, it is back; either is final', async () => {
    const user = await fundedUser(server, 10 * USDC);
    const api = client(server.baseUrl, user.token);
    const before = await ledgerCheck();
    const out = (await api.post('/v1/user/withdrawals', withdrawal(3 * USDC))).body;
    const back = (await api.post('/v1/user/withdrawals', withdrawal(2 * USDC))).body;
    const completed = await admin(server).post(`/v1/admin/withdrawals/${out.withdrawal_id}/complete`, {});
    assert.equal(completed.status, 200, JSON.stringify(completed.body));
    assert.equal(completed.body.status, 'completed');
    assert.equal(completed.body.account, `user:${user.userId}`);
    assert.equal(typeof completed.body.finished_at_ms, 'number');
    assert.deepEqual(
      (await admin(server).post(`/v1/admin/withdrawals/${out.withdrawal_id}/complete`, {})).body,
      completed.body,
      'again: unchanged',
    );
    const refused = await admin(server).post(`/v1/admin/withdrawals/${out.withdrawal_id}/fail`, {});
    assert.deepEqual([refused.status, refused.body.code], [409, 'WITHDRAWAL_FINAL']);
    assert.equal((await admin(server).post(`/v1/admin/withdrawals/${back.withdrawal_id}/fail`, {})).body.status, 'failed');
    assert.equal((await admin(server).post(`/v1/admin/withdrawals/${back.withdrawal_id}/complete`, {})).body.code, 'WITHDRAWAL_FINAL');
    const unknown = await admin(server).post(`/v1/admin/withdrawals/${randomUUID()}/complete`, {});
    assert.deepEqual([unknown.status, unknown.body.code], [404, 'WITHDRAWAL_NOT_FOUND']);
    assert.equal((await api.post(`/v1/admin/withdrawals/${back.withdrawal_id}/complete`, {})).status, 403, 'a user is not the operator');

    assert.deepEqual(await balanceOf(server, user), { available: BigInt(7 * USDC), reserved: 0n, atRisk: 0n });
    const after = await ledgerCheck();
    assert.equal(after.withdrawn - before.withdrawn, BigInt(3 * USDC), 'only the completed one left');
    assert.equal(after.total, after.credited - after.withdrawn);
    const mine = (await api.get('/v1/user/withdrawals')).body;
    assert.deepEqual(
      mine.withdrawals.map((w: { withdrawal_id: string; status: string }) => [w.withdrawal_id, w.status]),
      [
        [back.withdrawal_id, 'failed'],
        [out.withdrawal_id, 'completed'],
      ],
    );
  });
});

describe("a maker's withdrawal and the operator's queue", () => {
  it('comes from the collateral that is available; the queue lists pending ones oldest first, paged', async () => {
    const maker = await connectMaker(server, await registerMaker(server, undefined, undefined, 5 * USDC));
    try {
      const mm = client(server.baseUrl, maker.sessionToken);
      const short = await mm.post('/v1/mm/withdrawals', withdrawal(5 * USDC + 1));
      assert.deepEqual([short.status, short.body.code], [422, 'INSUFFICIENT_BALANCE']);
      const first = (await mm.post('/v1/mm/withdrawals', withdrawal(USDC))).body;
      const second = (await mm.post('/v1/mm/withdrawals', withdrawal(USDC))).body;
      assert.deepEqual((await mm.get('/v1/mm/balance')).body, {
        available_micros: String(3 * USDC),
        locked_micros: '0',
        pending_withdrawal_micros: String(2 * USDC),
      });
      const listed: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { status: number; body: any } = await admin(server).get(
          `/v1/admin/withdrawals?status=pending&limit=1${cursor === null ? '' : `&cursor=${cursor}`}`,
        );
        assert.equal(page.status, 200, JSON.stringify(page.body));
        listed.push(...page.body.withdrawals.map((w: { withdrawal_id: string }) => w.withdrawal_id));
        cursor = page.body.next_cursor;
      } while (cursor !== null);
      const mineInQueue = listed.filter((id) => id === first.withdrawal_id || id === second.withdrawal_id);
      assert.deepEqual(mineInQueue, [first.withdrawal_id, second.withdrawal_id], 'oldest first');
      await admin(server).post(`/v1/admin/withdrawals/${first.withdrawal_id}/complete`, {});
      const completed = (await admin(server).get('/v1/admin/withdrawals?status=completed')).body.withdrawals;
      assert.ok(
        completed.some(
          (w: { withdrawal_id: string; account: string }) =>
            w.withdrawal_id === first.withdrawal_id && w.account === `maker:${maker.address}`,
        ),
      );
      const own = (await mm.get('/v1/mm/withdrawals')).body.withdrawals.map((w: { withdrawal_id: string }) => w.withdrawal_id);
      assert.deepEqual(own, [second.withdrawal_id, first.withdrawal_id], 'newest first');
      const page1 = (await mm.get('/v1/mm/withdrawals?limit=1')).body;
      const page2 = (await mm.get(`/v1/mm/withdrawals?limit=1&cursor=${page1.next_cursor}`)).body;
      assert.deepEqual(
        [page1.withdrawals[0].withdrawal_id, page2.withdrawals[0].withdrawal_id, page2.next_cursor],
        [second.withdrawal_id, first.withdrawal_id, null],
      );
      await ledgerCheck();
    } finally {
      await maker.close();
    }
  });
});

describe("a maker's requests under one key, all at once", () => {
  it('make one withdrawal: one 201, every other the same withdrawal as a replay, the amount held once', async () => {
    const maker = await connectMaker(server, await registerMaker(server, undefined, undefined, 5 * USDC));
    try {
      const mm = client(server.baseUrl, maker.sessionToken);
      const body = withdrawal(USDC);
      const answers = await Promise.all(Array.from({ length: 8 }, () => mm.post('/v1/mm/withdrawals', body)));
      assert.deepEqual(
        answers.map((a) => a.status).sort(),
        [200, 200, 200, 200, 200, 200, 200, 201],
        JSON.stringify(answers.map((a) => a.body)),
      );
      assert.equal(new Set(answers.map((a) => a.body.withdrawal_id)).size, 1);
      assert.equal((await mm.get('/v1/mm/balance')).body.pending_withdrawal_micros, String(USDC));
      await ledgerCheck();
    } finally {
      await maker.close();
    }
  });
});

describe('a forged cursor (issue 33 item 6)', () => {
  /**
   * The cursor of the exploit, in the format cursors had before they were authenticated: base64url of
   * [route, filter tag, position], the position a raw `accountWithdrawals` key.
   */
  const oldFormatCursor = (route: string, key: string) => {
    const filterTag = createHash('sha256').update('[]').digest('base64url').slice(0, 11);
    return Buffer.from(JSON.stringify([route, filterTag, key]), 'utf8').toString('base64url');
  };
  const shown = (res: { body: unknown }) => JSON.stringify(res.body);

  it("reads no other account's withdrawal: a user's or a maker's list started at a key of another user is 400 at /cursor", async () => {
    const [one, two] = [await fundedUser(server, 10 * USDC), await fundedUser(server, 10 * USDC)];
    // The range was read downwards from the cursor's key: the attacker is the account below the victim.
    const [attacker, victim] = one.userId < two.userId ? [one, two] : [two, one];
    const stolen = (await client(server.baseUrl, victim.token).post('/v1/user/withdrawals', withdrawal(USDC))).body;
    assert.equal(stolen.destination, DESTINATION);
    const below = `user:${victim.userId}|~`; // above every key of the victim's: the read walks down through them
    const asUser = await client(server.baseUrl, attacker.token).get(
      `/v1/user/withdrawals?cursor=${oldFormatCursor('user-withdrawals', below)}`,
    );
    assert.ok(!shown(asUser).includes(stolen.withdrawal_id), `a user read another's withdrawal: ${shown(asUser)}`);
    assertApiError(asUser, 400, 'VALIDATION_FAILED', [{ path: '/cursor', message: 'cursor is not a next_cursor of this route' }]);

    // A maker's account key ("maker:0x...") sorts below every user's: its list walked into users' keys.
    const maker = await connectMaker(server, await registerMaker(server, undefined, undefined, 5 * USDC));
    try {
      const mm = client(server.baseUrl, maker.sessionToken);
      const asMaker = await mm.get(`/v1/mm/withdrawals?cursor=${oldFormatCursor('mm-withdrawals', below)}`);
      assert.ok(!shown(asMaker).includes(stolen.withdrawal_id), `a maker read a user's withdrawal: ${shown(asMaker)}`);
      assertApiError(asMaker, 400, 'VALIDATION_FAILED', [{ path: '/cursor', message: 'cursor is not a next_cursor of this route' }]);
      // The victim's own cursor, in the attacker's hands: issued to another caller.
      await client(server.baseUrl, victim.token).post('/v1/user/withdrawals', withdrawal(USDC));
      const victimCursor = (await client(server.baseUrl, victim.token).get('/v1/user/withdrawals?limit=1')).body.next_cursor as string;
      const foreign = await client(server.baseUrl, attacker.token).get(`/v1/user/withdrawals?cursor=${victimCursor}`);
      assert.ok(!shown(foreign).includes(stolen.withdrawal_id), shown(foreign));
      assertApiError(foreign, 400, 'VALIDATION_FAILED', [{ path: '/cursor', message: 'cursor was issued to another caller, or altered' }]);
    } finally {
      await maker.close();
    }
  });
});

describe('withdrawals racing RFQs for one balance', () => {
  it('never spend it twice: what was accepted adds up to at most the balance, and nothing is left held', async () => {
    const maker = await connectMaker(server, await registerMaker(server));
    const quoting = autoQuote(maker, { odds: 2 });
    try {
      const FUNDS = 10 * USDC;
      const user = await fundedUser(server, FUNDS);
      const api = client(server.baseUrl, user.token);
      const market = (await createMarket(server)).market_id;
      // 12 RFQs and 12 withdrawals of 1 USDC each, all at once, for 10 USDC.
      const answers = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          i % 2 === 0
            ? api
                .post('/v1/rfq/unsigned?wait_ms=3000', unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: USDC }))
                .then((r) => ['rfq', r] as const)
            : api.post('/v1/user/withdrawals', withdrawal(USDC)).then((r) => ['withdrawal', r] as const),
        ),
      );
      let filled = 0;
      let pending = 0;
      for (const [kind, res] of answers) {
        if (res.status === 422) {
          assert.equal(res.body.code, 'INSUFFICIENT_BALANCE');
          continue;
        }
        if (kind === 'rfq') {
          assert.equal(res.status, 201, JSON.stringify(res.body));
          assert.equal(res.body.status, 'completed');
          filled++;
        } else {
          assert.equal(res.status, 201, JSON.stringify(res.body));
          pending++;
        }
      }
      assert.equal(filled + pending, 10, `exactly the balance was spent (${filled} fills, ${pending} withdrawals)`);
      assert.deepEqual((await api.get('/v1/user/balance')).body, {
        available_micros: '0',
        reserved_micros: '0',
        at_risk_micros: String(filled * USDC),
        pending_withdrawal_micros: String(pending * USDC),
      });
      await ledgerCheck();
    } finally {
      quoting.stop();
      await maker.close();
    }
  });
});
