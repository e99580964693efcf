// The SDK's resume (issue 22, docs/maker-protocol.md section 3.5) through a relay whose link goes silent
// mid-burst: frames the service wrote after the freeze never arrive on the old socket; after the SDK notices
// the silence and reconnects, its resume replays them, and the SDK's user sees every rfq exactly once, in order.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import WebSocket from 'ws';
import { MakerClient, type MakerClientOptions, type RfqMessage, type SocketConstructor } from '../../src/sdk/index.js';
import { RecordingDispatcher, startStandaloneGateway, type StandaloneGateway } from '../helpers/standalone-gateway.js';
import { startFreezableRelay } from '../helpers/freezable-relay.js';
import { waitFor } from '../helpers/wait.js';

const rfqMessage = (): RfqMessage => ({
  type: 'rfq',
  request_id: randomUUID(),
  legs: [{ market_id: 1, direction: 'up' }],
  wager_micros: '1000000',
  order_type: 2,
  quote_deadline_ms: Date.now() + 60_000,
  expires_at_ms: Date.now() + 60_000,
  taker: null,
});

describe('maker SDK resume', () => {
  let gw: StandaloneGateway;
  let dispatcher: RecordingDispatcher;
  before(async () => {
    gw = await startStandaloneGateway({ config: { mmHeartbeatMs: 250 } });
    dispatcher = gw.dispatcher;
  });
  after(async () => {
    await gw.close();
  });

  /** A registered maker's client through a relay the test can freeze; it notices a silent link within 1 s. */
  async function clientThroughRelay(options: Partial<MakerClientOptions> = {}) {
    const relay = await startFreezableRelay(Number(new URL(gw.wsUrl).port));
    const key = Wallet.createRandom().privateKey;
    const maker = await gw.register(new Wallet(key));
    const mm = new MakerClient({
      url: relay.url,
      privateKey: key,
      WebSocket: WebSocket as unknown as SocketConstructor,
      serverSilenceMs: 1_000,
      reconnect: { initialDelayMs: 20, jitter: 0 },
      ...options,
    });
    return { relay, maker, mm };
  }

  it(
    'a link cut mid-burst: after the reconnect the resume replays what was lost, and the user sees each rfq once, in order',
    { timeout: 30_000 },
    async () => {
      const { relay, mm } = await clientThroughRelay();
      const seen: string[] = [];
      mm.on('rfq', (rfq) => seen.push(rfq.request_id));
      const resumed = mm.once('resumed');
      try {
        await mm.connect();
        const burst = Array.from({ length: 10 }, rfqMessage);
        for (const rfq of burst.slice(0, 5)) gw.gateway.broadcast(rfq);
        await waitFor(() => seen.length === 5, { timeoutMs: 5_000, intervalMs: 5, what: 'first half delivered' });
        relay.freeze();
        for (const rfq of burst.slice(5)) gw.gateway.broadcast(rfq); // written to a socket whose link is dead
        const answer = await resumed;
        assert.equal(answer.replayed, 5);
        assert.equal(answer.next_seq, mm.lastSeq + 1);
        assert.deepEqual(
          seen,
          burst.map((r) => r.request_id),
        );
        // The stream goes on: a new rfq arrives once, after the replay.
        const later = rfqMessage();
        gw.gateway.broadcast(later);
        await waitFor(() => seen.length === 11, { timeoutMs: 5_000, intervalMs: 5, what: 'live rfq after the resume' });
        assert.equal(seen[10], later.request_id);
      } finally {
        mm.close();
        await relay.close();
      }
    },
  );

  it(
    'a last look written to a lost socket is neither replayed by the resume nor answered: the drop ended it as a reject',
    { timeout: 30_000 },
    async () => {
      let asked = 0;
      const { relay, maker, mm } = await clientThroughRelay({
        onLastLook: () => {
          asked++;
          return true;
        },
      });
      const lastLooks: string[] = [];
      mm.on('last_look', (look) => lastLooks.push(look.request_id));
      const seen: string[] = [];
      mm.on('rfq', (rfq) => seen.push(rfq.request_id));
      const resumed = mm.once('resumed');
      try {
        await mm.connect();
        const [makerId] = gw.gateway.makerIdsOf(maker.address);
        relay.freeze();
        // Written to the socket whose link is dead: a last look (its deadline far off: only the replay decides),
        // then an rfq, which is replayed and passed on as usual.
        const requestId = randomUUID();
        gw.gateway.send(makerId!, {
          type: 'last_look',
          request_id: requestId,
          quote_id: 'q1',
          fill_wager_micros: '1000000',
          deadline_ms: Date.now() + 60_000,
        });
        const after = rfqMessage();
        gw.gateway.broadcast(after);
        // The gateway holds a last look never to be replayed; the SDK would skip one an older server replays.
        assert.equal((await resumed).replayed, 1);
        await waitFor(() => seen.includes(after.request_id), { timeoutMs: 5_000, intervalMs: 5, what: 'the replayed rfq' });
        assert.deepEqual([asked, lastLooks], [0, []]);
        assert.equal(
          dispatcher.events.some((e) => e.kind === 'last_look_response'),
          false,
          'no last_look_response was sent',
        );
      } finally {
        mm.close();
        await relay.close();
      }
    },
  );

  it('resume: false leaves the lost frames unreplayed', { timeout: 30_000 }, async () => {
    const { relay, mm } = await clientThroughRelay({ resume: false });
    const seen: string[] = [];
    mm.on('rfq', (rfq) => seen.push(rfq.request_id));
    let authentications = 0;
    mm.on('authenticated', () => authentications++);
    try {
      await mm.connect();
      relay.freeze();
      gw.gateway.broadcast(rfqMessage());
      await waitFor(() => authentications === 2, { timeoutMs: 10_000, intervalMs: 5, what: 'reconnected' });
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(seen, []);
    } finally {
      mm.close();
      await relay.close();
    }
  });
});
