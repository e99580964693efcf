// Auto-void (contract section 12): a market of any kind still unresolved PARLAYD_RESOLUTION_GRACE_MS after
// it was due is VOIDED (resolved_by auto_void) through the same resolve as an admin's, so what is at risk on
// it is refunded. In process on a manual clock (the real service, createService, with its LMDB in a temp
// dir), and end to end with a tiny grace.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { createService } from '../../src/boot/app.js';
import { loadConfig } from '../../src/config/config.js';
import { AutoVoidSweep, VOIDS_PER_TURN } from '../../src/oracle/auto-void.js';
import { client } from '../helpers/http.js';
import { connectNewMaker } from '../helpers/makers.js';
import { createMarket } from '../helpers/markets.js';
import { waitForMarket } from '../helpers/oracle.js';
import { autoQuote, balanceOf, unsignedBody } from '../helpers/rfq.js';
import { removeDataDir, startServer, testServiceEnv } from '../helpers/server.js';
import { credit, loginWallet } from '../helpers/users.js';
import { waitFor } from '../helpers/wait.js';

const HOUR_MS = 3_600_000;

function manualClock(startMs: number) {
  let nowMs = startMs;
  return { nowMs: () => nowMs, advance: (byMs: number) => void (nowMs += byMs) };
}

describe('auto-void on a manual clock', () => {
  it('voids every kind of market once the grace after its due time has passed, and nothing before', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'parlayd-test-'));
    const config = loadConfig({
      ...testServiceEnv(dataDir),
      PARLAYD_RESOLUTION_GRACE_MS: String(HOUR_MS),
      PARLAYD_PRICE_DURATIONS_SECS: '60',
    });
    const clock = manualClock(Date.now());
    const service = await createService(config, pino({ level: 'silent' }), clock);
    try {
      const admin = client(`http://127.0.0.1:${service.port}`, config.adminToken);
      const mention = async (fields: Record<string, number>) => {
        const res = await admin.post('/v1/admin/mention-markets', {
          name: 'm',
          source_kind: 'test',
          source_event_id: 'e',
          source_market_id: String(Math.random()),
          ...fields,
        });
        assert.equal(res.status, 201, JSON.stringify(res.body));
        return res.body.market_id as number;
      };
      const t0 = clock.nowMs();
      const byResolutionTime = await mention({
        betting_closes_at_ms: t0 + 500,
        resolution_time_ms: t0 + 1_000,
        live_ends_at_ms: t0 + 5 * HOUR_MS,
      });
      const byLiveEnd = await mention({ betting_closes_at_ms: t0 + 500, live_ends_at_ms: t0 + 2_000 });
      const byBettingClose = await mention({ betting_closes_at_ms: t0 + 3_000 });
      const resolvedByAdmin = await mention({ betting_closes_at_ms: t0 + 500 });
      const dueLater = await mention({ betting_closes_at_ms: t0 + 10 * HOUR_MS });
      const window = await service.services.markets.currentPriceMarket('BTC', 60);
      assert.equal((await admin.post(`/v1/admin/markets/${resolvedByAdmin}/resolve`, { outcome: 'YES' })).status, 200);

      const statusOf = (id: number) => {
        const m = service.services.markets.get(id)!;
        return [m.status, m.resolved_by];
      };
      // Due, but the grace has not passed: nothing is voided.
      clock.advance(HOUR_MS);
      assert.equal(await service.services.oracle.sweep.sweep(), 0);
      assert.deepEqual(statusOf(byResolutionTime), ['OPEN', null]);

      clock.advance(5_000 + 60_000);
      assert.equal(await service.services.oracle.sweep.sweep(), 4);
      for (const id of [byResolutionTime, byLiveEnd, byBettingClose, window.market_id])
        assert.deepEqual(statusOf(id), ['VOIDED', 'auto_void']);
      assert.deepEqual(statusOf(resolvedByAdmin), ['RESOLVED', 'admin']);
      assert.deepEqual(statusOf(dueLater), ['OPEN', null]);
      assert.equal(await service.services.oracle.sweep.sweep(), 0, 'a second pass finds nothing');
      // The oracle's window index let go of the voided window.
      assert.equal(service.services.oracle.resolver.indexedCount, 0);
    } finally {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('voids at most VOIDS_PER_TURN markets per event-loop turn', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'parlayd-test-'));
    const config = loadConfig({ ...testServiceEnv(dataDir), PARLAYD_RESOLUTION_GRACE_MS: '0' });
    const clock = manualClock(Date.now());
    const service = await createService(config, pino({ level: 'silent' }), clock);
    try {
      const { markets } = service.services;
      const ids: number[] = [];
      for (let i = 0; i < 300; i++) {
        ids.push(
          (
            await markets.createMention({
              name: 'm',
              source_kind: 't',
              source_event_id: 'e',
              source_market_id: String(i),
              betting_closes_at_ms: clock.nowMs() + 1 + i,
            })
          ).market_id,
        );
      }
      await service.services.oracle.sweep.stop(); // only this test's passes from here
      clock.advance(10_000);
      // Count resolves per turn: a turn ends when a setImmediate callback runs.
      let inTurn = 0;
      let maxInTurn = 0;
      const original = markets.resolve.bind(markets);
      markets.resolve = (...args: Parameters<typeof original>) => {
        inTurn++;
        maxInTurn = Math.max(maxInTurn, inTurn);
        return original(...args);
      };
      let ticking = true;
      const tick = () => {
        inTurn = 0;
        if (ticking) setImmediate(tick);
      };
      setImmediate(tick);
      const sweep = new AutoVoidSweep(markets, clock, pino({ level: 'silent' }), 0);
      assert.equal(await sweep.sweep(), 300);
      ticking = false;
      assert.ok(maxInTurn <= VOIDS_PER_TURN, `${maxInTurn} resolves in one turn`);
      assert.ok(ids.every((id) => markets.get(id)!.status === 'VOIDED'));
    } finally {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('auto-void end to end', () => {
  it('with a tiny grace, a market nobody resolves is voided and the filled position on it refunded', async () => {
    const server = await startServer({ env: { PARLAYD_RESOLUTION_GRACE_MS: '1', PARLAYD_QUOTE_WINDOW_MS: '100' } });
    try {
      const maker = await connectNewMaker(server);
      autoQuote(maker, { odds: 2.5 });
      const taker = await loginWallet(server);
      await credit(server, taker.address, 50_000_000);
      const marketId = (await createMarket(server, 'voided unresolved', Date.now() + 1_500)).market_id;
      const rfq = await client(server.baseUrl, taker.token).post(
        '/v1/rfq/unsigned?wait_ms=3000',
        unsignedBody([{ market_id: marketId, direction: 'up' }], { wager_micros: 4_000_000 }),
      );
      assert.equal(rfq.body.status, 'completed', JSON.stringify(rfq.body));
      await maker.close();
      const market = await waitForMarket(server, marketId, (m) => m['status'] !== 'OPEN', 5_000);
      assert.deepEqual([market['status'], market['outcome'], market['resolved_by']], ['VOIDED', null, 'auto_void']);
      // The settlement commits after the market's resolution is visible.
      await waitFor(async () => assert.deepEqual(await balanceOf(server, taker), { available: 50_000_000n, reserved: 0n, atRisk: 0n }), {
        timeoutMs: 2_000,
        what: 'the refund of the voided market',
      });
    } finally {
      await server.stop();
      removeDataDir(server);
    }
  });
});
