// The JSON heartbeat (interface.md "Events" and "Limits", contract section 7): a heartbeat every interval
// (15 s by default, 300 ms here), answered by pong; three heartbeats in a row without a pong close the socket.
// End to end on real timers, uWS and the wire; the counting rules (a pong resets the count, a malformed pong
// is no answer, no heartbeat before auth, the tick that closes) are mm/timing.test's, on a manual clock.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { connectMaker, registerMaker, type TestMaker } from '../helpers/makers.js';

// Long enough that a busy test machine answers a heartbeat well within one interval.
const HEARTBEAT_MS = 300;

describe('maker heartbeat', () => {
  let server: TestServer;
  let maker: TestMaker;

  before(async () => {
    server = await startServer({ env: { PARLAYD_MM_HEARTBEAT_MS: String(HEARTBEAT_MS) } });
    maker = await registerMaker(server);
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  it('{type: heartbeat, ts} every interval; answered, the socket stays past three; unanswered, three more and error HEARTBEAT_TIMEOUT, close 1008', async () => {
    const mm = await connectMaker(server, maker); // answers every heartbeat with pong
    // Four: had the pongs not reset the count, the fourth tick would have closed the socket instead.
    const beats = [];
    for (let i = 0; i < 4; i++) beats.push(await mm.next('heartbeat', 10_000));
    for (const beat of beats) {
      assert.deepEqual(Object.keys(beat).sort(), ['ts', 'type']);
      assert.ok(Math.abs(beat.ts - Date.now()) < 5_000, `ts ${beat.ts}`);
    }
    // Spacing is the interval, give or take scheduling on a busy machine.
    assert.ok(beats[3]!.ts - beats[0]!.ts >= HEARTBEAT_MS * 3 - 50, JSON.stringify(beats));
    assert.equal(mm.socket.isOpen, true);

    mm.socket.autoPong = false;
    const error = await mm.next('error', 10_000);
    assert.deepEqual(error, { type: 'error', code: 'HEARTBEAT_TIMEOUT', message: error.message });
    assert.deepEqual(await mm.socket.waitClosed(), { code: 1008, reason: 'HEARTBEAT_TIMEOUT' });
    // The fourth was answered before the pongs stopped (answered as it arrived), so three more went unanswered.
    assert.equal(mm.socket.received.filter((m) => m.type === 'heartbeat').length, 4 + 3);
    assert.equal((await fetch(server.baseUrl + '/healthz')).status, 200);
  });
});
