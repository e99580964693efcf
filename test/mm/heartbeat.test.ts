// The JSON heartbeat (interface.md "Events" and "Limits", contract section 7): a heartbeat every interval
// (15 s by default, 300 ms here), answered by pong; three heartbeats in a row without a pong close the socket.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { MakerSocket, connectMaker, registerMaker, type TestMaker } from '../helpers/makers.js';

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

  it('an authenticated maker gets {type: heartbeat, ts} every interval, ts in Unix ms', async () => {
    const mm = await connectMaker(server, maker);
    const beats = [await mm.next('heartbeat'), await mm.next('heartbeat'), await mm.next('heartbeat')];
    for (const beat of beats) {
      assert.deepEqual(Object.keys(beat).sort(), ['ts', 'type']);
      assert.ok(Math.abs(beat.ts - Date.now()) < 5_000, `ts ${beat.ts}`);
    }
    // Spacing is the interval, give or take scheduling on a busy machine.
    assert.ok(beats[2]!.ts - beats[0]!.ts >= HEARTBEAT_MS * 2 - 50, JSON.stringify(beats));
    await mm.close();
  });

  it('three heartbeats without a pong: error HEARTBEAT_TIMEOUT and close 1008, after exactly three heartbeats', async () => {
    const mm = await connectMaker(server, maker, { autoPong: false });
    const error = await mm.next('error', 10_000);
    assert.deepEqual(error, { type: 'error', code: 'HEARTBEAT_TIMEOUT', message: error.message });
    assert.deepEqual(await mm.socket.waitClosed(), { code: 1008, reason: 'HEARTBEAT_TIMEOUT' });
    assert.equal(mm.socket.received.filter((m) => m.type === 'heartbeat').length, 3);
    assert.equal((await fetch(server.baseUrl + '/healthz')).status, 200);
  });

  it('a pong resets the count: answering only every third heartbeat keeps the socket open', async () => {
    const mm = await connectMaker(server, maker, { autoPong: false });
    for (let i = 1; i <= 6; i++) {
      const beat = await mm.next('heartbeat', 10_000);
      if (i % 3 === 0) mm.send({ type: 'pong', ts: beat.ts });
    }
    assert.equal(mm.socket.isOpen, true);
    assert.equal(
      mm.socket.received.some((m) => m.type === 'error'),
      false,
    );
    await mm.close();
  });

  it('a maker that answers every heartbeat stays connected', async () => {
    const mm = await connectMaker(server, maker); // autoPong
    for (let i = 0; i < 6; i++) await mm.next('heartbeat', 10_000);
    assert.equal(mm.socket.isOpen, true);
    await mm.close();
  });

  it('a malformed pong gets error VALIDATION_FAILED, keeps the socket open and does not count as an answer', async () => {
    const mm = await connectMaker(server, maker, { autoPong: false });
    mm.socket.autoPong = false;
    const onBeat = async () => {
      const beat = await mm.next('heartbeat', 10_000);
      mm.send({ type: 'pong', ts: String(beat.ts) });
      const error = await mm.next('error');
      assert.equal(error.code, 'VALIDATION_FAILED');
      assert.equal(mm.socket.isOpen, true);
    };
    await onBeat();
    await onBeat();
    await onBeat();
    assert.equal((await mm.next('error', 10_000)).code, 'HEARTBEAT_TIMEOUT');
    assert.equal((await mm.socket.waitClosed()).reason, 'HEARTBEAT_TIMEOUT');
  });

  it('sockets that are not authenticated get no heartbeat', async () => {
    const socket = await MakerSocket.open(server);
    await socket.next('auth_challenge');
    // Longer than three intervals: an authenticated socket would have had three heartbeats by now.
    await assert.rejects(socket.next('heartbeat', HEARTBEAT_MS * 4));
    await socket.close();
  });
});
