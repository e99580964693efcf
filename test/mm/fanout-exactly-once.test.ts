// Issue 35 item 1: an rfq frame's bytes are made once per RFQ and each socket gets its own seq spliced in
// front of them, every socket written in a loop turn flushed once (src/mm/socket-writer.ts). What makers see
// must not change: at 1,000 connected makers, RFQs posted in bursts (several broadcast in one turn, so one
// flush writes several rfqs per socket) reach every maker exactly once, in the same order for every maker,
// with a gapless increasing seq on each socket (MakerSocket asserts the seq of every frame it reads).
//
// Real service, real sockets. 1,000 logins are paced under the pending-auth bounds (LOGIN_CONCURRENCY at
// once, within the per-IP and per-network places given below); ten registered makers hold 100 sockets each.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectMaker, registerMaker, type ConnectedMaker } from '../helpers/makers.js';
import { fundedTaker, unsignedBody } from '../helpers/rfq.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const SOCKETS = 1_000;
const MAKERS = 10;
const SOCKETS_PER_MAKER = SOCKETS / MAKERS;
const LOGIN_CONCURRENCY = 32;
/** RFQs posted, BURST at a time: a burst's rfqs reach the main thread together and share flushes. */
const RFQS = 30;
const BURST = 10;

describe('fan-out at 1,000 makers (issue 35)', () => {
  let server: TestServer;
  const sockets: ConnectedMaker[] = [];

  before(async () => {
    server = await startServer({
      env: {
        PARLAYD_MM_MAX_SOCKETS_PER_MAKER: String(SOCKETS_PER_MAKER),
        PARLAYD_MM_MAX_PENDING_AUTH_PER_IP: String(2 * LOGIN_CONCURRENCY),
        PARLAYD_MM_MAX_PENDING_AUTH_PER_NETWORK: String(2 * LOGIN_CONCURRENCY),
      },
    });
  });
  after(async () => {
    await Promise.all(sockets.map((s) => s.close()));
    await server.stop();
    removeDataDir(server);
  });

  it('every maker sees every rfq exactly once, in one order for all, with gapless seqs', async () => {
    const makers = await Promise.all(Array.from({ length: MAKERS }, () => registerMaker(server)));
    let next = 0;
    const login = async (): Promise<void> => {
      for (let i = next++; i < SOCKETS; i = next++) sockets.push(await connectMaker(server, makers[i % MAKERS]!, { timeoutMs: 20_000 }));
    };
    await Promise.all(Array.from({ length: LOGIN_CONCURRENCY }, login));
    assert.equal(sockets.length, SOCKETS);

    const { market, api } = await fundedTaker(server, 1_000_000_000);
    const requestIds = new Set<string>();
    for (let sent = 0; sent < RFQS; sent += BURST) {
      const created = await Promise.all(
        Array.from({ length: BURST }, () => api.post('/v1/rfq/unsigned', unsignedBody([{ market_id: market, direction: 'up' }]))),
      );
      for (const res of created) {
        assert.equal(res.status, 201, JSON.stringify(res.body));
        requestIds.add((res.body as { request_id: string }).request_id);
      }
    }
    assert.equal(requestIds.size, RFQS);

    const rfqsOf = (s: ConnectedMaker) => s.socket.received.flatMap((m) => (m.type === 'rfq' ? [m.request_id] : []));
    await waitFor(() => sockets.every((s) => rfqsOf(s).length >= RFQS), {
      what: `${RFQS} rfqs on each of ${SOCKETS} sockets`,
      timeoutMs: 20_000,
      intervalMs: 50,
    });
    // Settle: a duplicate written late would land now.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const order = rfqsOf(sockets[0]!);
    assert.deepEqual(new Set(order), requestIds, 'the first socket got other rfqs than those posted');
    for (const [i, s] of sockets.entries()) {
      assert.deepEqual(rfqsOf(s), order, `socket ${i}: rfqs missing, repeated or in another order`);
      assert.equal(s.socket.isOpen, true, `socket ${i} was closed`);
      // Every message after auth_result numbered, gapless from 1 (also asserted frame by frame as it came).
      const seqs = s.socket.seqs.filter((seq) => seq !== null);
      assert.deepEqual(
        seqs,
        seqs.map((_, k) => k + 1),
        `socket ${i}: seqs`,
      );
    }
  });
});
