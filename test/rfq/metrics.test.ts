// The RFQ metrics contract section 10 asks of /metrics: RFQs by status, end-to-end and stage latencies.
// Real RFQs against the real server; the figures must agree with what the client saw.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { connectNewMaker } from '../helpers/makers.js';
import { autoQuote, fundedTaker, unsignedBody } from '../helpers/rfq.js';
import { waitFor } from '../helpers/wait.js';

async function metricsText(server: TestServer): Promise<string> {
  return (await client(server.baseUrl, server.adminToken).get('/metrics')).body as string;
}

/** The value of one sample line, `name{labels} value`, or of `name value` when `labels` is ''. */
function sample(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  assert.ok(line !== undefined, `${name}${labels} is exported`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

test('/metrics counts RFQs by terminal status and times them end to end and by stage', async () => {
  const server = await startServer();
  try {
    const { market, api } = await fundedTaker(server, 100_000_000);
    const legs = [{ market_id: market, direction: 'up' as const }];
    // With no maker connected an RFQ ends `timeout` at once.
    const timedOut = await api.post('/v1/rfq/unsigned?wait_ms=5000', unsignedBody(legs, { wager_micros: 1_000_000 }));
    assert.equal(timedOut.body.status, 'timeout');
    const maker = await connectNewMaker(server);
    autoQuote(maker, { odds: 2 });
    let slowestMs = 0;
    for (let i = 0; i < 3; i++) {
      const startMs = Date.now();
      const completed = await api.post('/v1/rfq/unsigned?wait_ms=5000', unsignedBody(legs, { wager_micros: 1_000_000 }));
      slowestMs = Math.max(slowestMs, Date.now() - startMs);
      assert.equal(completed.body.status, 'completed');
    }
    await maker.close();

    const text = await metricsText(server);
    assert.equal(sample(text, 'parlayd_rfq_terminal_total', '{status="completed",error=""}'), 3);
    assert.equal(sample(text, 'parlayd_rfq_terminal_total', '{status="timeout",error=""}'), 1);
    assert.equal(sample(text, 'parlayd_rfq_end_to_end_seconds_count'), 4);
    // Each RFQ's end to end lies within what its client waited (whole ms at both ends: + 1 ms each).
    const endToEndSumS = sample(text, 'parlayd_rfq_end_to_end_seconds_sum');
    assert.ok(endToEndSumS >= 0 && endToEndSumS <= (4 * (slowestMs + 1)) / 1000, `sum ${endToEndSumS} s, slowest answer ${slowestMs} ms`);
    assert.equal(sample(text, 'parlayd_rfq_end_to_end_seconds_bucket', '{le="+Inf"}'), 4);
    // Stages: every RFQ was admitted, selected and made durable.
    assert.equal(sample(text, 'parlayd_rfq_admission_seconds_count'), 4);
    assert.equal(sample(text, 'parlayd_rfq_selection_seconds_count'), 4);
    // Quoting (the makers' round trip) is part of each end to end: its sum is within the same bound.
    assert.equal(sample(text, 'parlayd_rfq_quoting_seconds_count'), 4);
    const quotingSumS = sample(text, 'parlayd_rfq_quoting_seconds_sum');
    assert.ok(
      quotingSumS > 0 && quotingSumS <= (4 * (slowestMs + 1)) / 1000,
      `quoting sum ${quotingSumS} s, slowest answer ${slowestMs} ms`,
    );
    assert.ok(sample(text, 'parlayd_rfq_persist_seconds_count') >= 4);
  } finally {
    await server.stop();
  }
});

test("/metrics counts the shard's group commits and the durable writes they held", async () => {
  // The lmdb engine's group commit on the shard's thread (the journal engine commits none there).
  const server = await startServer({ env: { PARLAYD_ENGINE: 'lmdb' } });
  try {
    const { market, api } = await fundedTaker(server, 100_000_000);
    const legs = [{ market_id: market, direction: 'up' as const }];
    // Four RFQs sent at once (no maker: each ends `timeout` at once): their writes share commits.
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => api.post('/v1/rfq/unsigned?wait_ms=5000', unsignedBody(legs, { wager_micros: 1_000_000 }))),
    );
    assert.deepEqual(
      answers.map((a) => a.body.status),
      ['timeout', 'timeout', 'timeout', 'timeout'],
    );
    // Every RFQ durable write is one of the shard's transactions (so are the taker's credit and the start's
    // recovery): once the shard's next report is in, the transactions cover them, in at least one commit
    // and at most one commit each.
    const persisted = sample(await metricsText(server), 'parlayd_rfq_persist_seconds_count');
    assert.ok(persisted >= 4, `${persisted} durable RFQ writes`);
    await waitFor(
      async () => {
        const text = await metricsText(server);
        const commits = sample(text, 'parlayd_rfq_shard_commits_total');
        const transactions = sample(text, 'parlayd_rfq_shard_commit_transactions_total');
        assert.ok(transactions >= persisted + 1, `${transactions} transactions for ${persisted} RFQ writes and a credit`);
        assert.ok(commits >= 1 && commits <= transactions, `${commits} commits of ${transactions} transactions`);
      },
      { what: "the shard's commits reported", timeoutMs: 5_000 },
    );
  } finally {
    await server.stop();
  }
});
