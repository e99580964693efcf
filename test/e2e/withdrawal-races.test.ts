// Withdrawals raced against themselves (contract section 11) on the real server: the operator's complete and
// fail of one withdrawal sent together end it one way only, in its money and in its record alike; an
// identical request sent twice at once is one withdrawal, moved once. The ledger check runs when the server
// stops.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { admin, client, type HttpResult } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { fundedUser } from '../helpers/users.js';

const USDC = 1_000_000;
const DESTINATION = `0x${'5a'.repeat(20)}`;
const RACES = 30;

let server: TestServer;
before(async () => {
  server = await startServer({ env: { PARLAYD_SHARDS: '2' } });
});
after(async () => {
  await server.stop();
});

const withdrawal = (amount: number, key = randomUUID()) => ({ amount_micros: amount, destination: DESTINATION, idempotency_key: key });

async function withdrawnMicros(): Promise<bigint> {
  const res = await admin(server).get('/v1/admin/ledger/check');
  assert.equal(res.body.ok, true, JSON.stringify(res.body));
  return BigInt(res.body.withdrawn_micros);
}

/** Every withdrawal id the operator's queue of `status` lists, through all its pages. */
async function idsWithStatus(status: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page: HttpResult = await admin(server).get(
      `/v1/admin/withdrawals?status=${status}&limit=100${cursor === null ? '' : `&cursor=${cursor}`}`,
    );
    assert.equal(page.status, 200, JSON.stringify(page.body));
    ids.push(...page.body.withdrawals.map((w: { withdrawal_id: string }) => w.withdrawal_id));
    cursor = page.body.next_cursor;
  } while (cursor !== null);
  return ids;
}

/** The caller's own withdrawals as id → status, through all their pages. */
async function ownStatuses(token: string): Promise<Map<string, string>> {
  const statuses = new Map<string, string>();
  let cursor: string | null = null;
  do {
    const page: HttpResult = await client(server.baseUrl, token).get(
      `/v1/user/withdrawals?limit=100${cursor === null ? '' : `&cursor=${cursor}`}`,
    );
    assert.equal(page.status, 200, JSON.stringify(page.body));
    for (const w of page.body.withdrawals as Array<{ withdrawal_id: string; status: string }>) statuses.set(w.withdrawal_id, w.status);
    cursor = page.body.next_cursor;
  } while (cursor !== null);
  return statuses;
}

/** Complete and fail of one withdrawal, sent together: which one won, after checking the other was refused. */
async function raceEnds(withdrawalId: string): Promise<'completed' | 'failed'> {
  const operator = admin(server);
  const [completed, failed] = await Promise.all([
    operator.post(`/v1/admin/withdrawals/${withdrawalId}/complete`, {}),
    operator.post(`/v1/admin/withdrawals/${withdrawalId}/fail`, {}),
  ]);
  const statuses = [completed.status, failed.status].sort();
  assert.deepEqual(statuses, [200, 409], `one end wins: ${JSON.stringify([completed.body, failed.body])}`);
  const [winner, loser] = completed.status === 200 ? [completed, failed] : [failed, completed];
  assert.equal(loser.body.code, 'WITHDRAWAL_FINAL');
  const won = completed.status === 200 ? 'completed' : 'failed';
  assert.equal(winner.body.status, won);
  // Final: the winner's end again answers it unchanged, the other end is refused again.
  const again = await operator.post(`/v1/admin/withdrawals/${withdrawalId}/${won === 'completed' ? 'complete' : 'fail'}`, {});
  assert.deepEqual([again.status, again.body], [200, winner.body]);
  const other = await operator.post(`/v1/admin/withdrawals/${withdrawalId}/${won === 'completed' ? 'fail' : 'complete'}`, {});
  assert.deepEqual([other.status, other.body.code], [409, 'WITHDRAWAL_FINAL']);
  return won;
}

describe("the operator's complete and fail of one withdrawal, sent together", () => {
  it('end it one way: one 200, one 409 WITHDRAWAL_FINAL; the money, the queue and the list agree with the winner', async () => {
    // Each withdrawal of its own amount, so the balance says which ones came back.
    const amountOf = (i: number) => (i + 1) * 10_000;
    const funds = Array.from({ length: RACES }, (_, i) => amountOf(i)).reduce((a, b) => a + b, 0) + USDC;
    const user = await fundedUser(server, funds);
    const api = client(server.baseUrl, user.token);
    const withdrawnBefore = await withdrawnMicros();
    const ids: string[] = [];
    for (let i = 0; i < RACES; i++) {
      const created = await api.post('/v1/user/withdrawals', withdrawal(amountOf(i)));
      assert.equal(created.status, 201, JSON.stringify(created.body));
      ids.push(created.body.withdrawal_id);
    }
    const won = new Map<string, 'completed' | 'failed'>();
    for (const id of ids) won.set(id, await raceEnds(id));

    const completedMicros = ids.reduce((sum, id, i) => sum + (won.get(id) === 'completed' ? amountOf(i) : 0), 0);
    assert.deepEqual((await api.get('/v1/user/balance')).body, {
      available_micros: String(funds - completedMicros),
      reserved_micros: '0',
      at_risk_micros: '0',
      pending_withdrawal_micros: '0',
    });
    assert.equal((await withdrawnMicros()) - withdrawnBefore, BigInt(completedMicros), 'withdrawn: exactly the completed ones');

    const listed = {
      pending: await idsWithStatus('pending'),
      completed: await idsWithStatus('completed'),
      failed: await idsWithStatus('failed'),
    };
    const own = await ownStatuses(user.token);
    for (const id of ids) {
      const listedUnder = Object.entries(listed).flatMap(([status, listedIds]) =>
        listedIds.filter((listedId) => listedId === id).map(() => status),
      );
      assert.deepEqual(listedUnder, [won.get(id)], `${id} is listed under its winning status only`);
      assert.equal(own.get(id), won.get(id), `${id} shows its winning status to its user`);
    }
  });
});

describe("the operator's same end of one withdrawal, sent twice together", () => {
  it('answers both with the one record it wrote, moved once', async () => {
    const TRIES = 10;
    const user = await fundedUser(server, TRIES * USDC);
    const api = client(server.baseUrl, user.token);
    const withdrawnBefore = await withdrawnMicros();
    let completed = 0;
    for (let i = 0; i < TRIES; i++) {
      const id = (await api.post('/v1/user/withdrawals', withdrawal(USDC))).body.withdrawal_id as string;
      const end = i % 2 === 0 ? 'complete' : 'fail';
      const path = `/v1/admin/withdrawals/${id}/${end}`;
      const answers = await Promise.all([admin(server).post(path, {}), admin(server).post(path, {})]);
      assert.deepEqual(
        answers.map((answer) => answer.status),
        [200, 200],
      );
      assert.deepEqual(answers[0]!.body, answers[1]!.body, 'one record, whichever came second');
      assert.deepEqual(answers[0]!.body, (await admin(server).post(path, {})).body, 'and again, unchanged');
      if (end === 'complete') completed++;
    }
    assert.equal((await api.get('/v1/user/balance')).body.available_micros, String((TRIES - completed) * USDC));
    assert.equal((await withdrawnMicros()) - withdrawnBefore, BigInt(completed * USDC));
  });
});

describe('an identical withdrawal sent twice at once', () => {
  it('is one withdrawal: one 201, one 200 with the same withdrawal, the money moved once', async () => {
    const TRIES = 10;
    const AMOUNT = USDC;
    const user = await fundedUser(server, TRIES * AMOUNT + USDC);
    const api = client(server.baseUrl, user.token);
    for (let i = 0; i < TRIES; i++) {
      const body = withdrawal(AMOUNT);
      const answers = await Promise.all([api.post('/v1/user/withdrawals', body), api.post('/v1/user/withdrawals', body)]);
      assert.deepEqual(
        answers.map((answer) => answer.status).sort(),
        [200, 201],
        `one created, one replayed: ${JSON.stringify(answers.map((answer) => answer.body))}`,
      );
      assert.deepEqual(answers[0]!.body, answers[1]!.body, 'the same withdrawal');
    }
    assert.deepEqual((await api.get('/v1/user/balance')).body, {
      available_micros: String(USDC),
      reserved_micros: '0',
      at_risk_micros: '0',
      pending_withdrawal_micros: String(TRIES * AMOUNT),
    });
    assert.equal((await ownStatuses(user.token)).size, TRIES, 'one withdrawal per key');
  });

  it('with other content under the same key, conflicts: one 201, one 409 IDEMPOTENCY_CONFLICT', async () => {
    const user = await fundedUser(server, 10 * USDC);
    const api = client(server.baseUrl, user.token);
    const key = randomUUID();
    const answers = await Promise.all([
      api.post('/v1/user/withdrawals', withdrawal(USDC, key)),
      api.post('/v1/user/withdrawals', withdrawal(2 * USDC, key)),
    ]);
    const byStatus = new Map(answers.map((answer) => [answer.status, answer.body]));
    assert.deepEqual([...byStatus.keys()].sort(), [201, 409], JSON.stringify(answers.map((answer) => answer.body)));
    assert.equal(byStatus.get(409).code, 'IDEMPOTENCY_CONFLICT');
    const held = BigInt(byStatus.get(201).amount_micros);
    const balance = (await api.get('/v1/user/balance')).body;
    assert.deepEqual([balance.available_micros, balance.pending_withdrawal_micros], [String(10n * BigInt(USDC) - held), String(held)]);
  });
});
