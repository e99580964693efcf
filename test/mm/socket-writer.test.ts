// The socket writer (src/mm/socket-writer.ts, issue 35 item 1): every frame queued for a socket in a loop
// turn is written at the turn's end under one cork per socket, in order, a numbered frame as its seq spliced
// in front of its body's bytes (the same bytes for every socket of a broadcast); the send buffer is read
// after each cork of 64 frames, and a socket's queue is written at once past MAX_QUEUED_FRAMES. The sockets
// are stand-ins (the edge of the world: uWS's WebSocket), recording each cork and what was sent under it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { WebSocket } from 'uWebSockets.js';
import { ByteArena, bytesAt, type ArenaBytes } from '../../src/mm/byte-arena.js';
import { Connection, type UserData } from '../../src/mm/connection.js';
import { MAX_QUEUED_FRAMES, SocketWriter } from '../../src/mm/socket-writer.js';
import { bodyOf, stamp } from '../../src/mm/stream.js';

/** What the writer calls on a uWS socket: each cork's frames (sends outside a cork are corks of one). */
class RecordingSocket {
  readonly corks: string[][] = [];
  bufferedBytes = 0;
  /** Added to bufferedBytes per frame sent: a socket whose reader has stopped. */
  bytesStuckPerFrame = 0;
  #isCorked = false;

  cork(fn: () => void): this {
    this.corks.push([]);
    this.#isCorked = true;
    fn();
    this.#isCorked = false;
    return this;
  }

  send(frame: string | Uint8Array): number {
    // A view of the writer's scratch buffer is valid during the call only: decoded now.
    const text = typeof frame === 'string' ? frame : new TextDecoder().decode(frame);
    if (this.#isCorked) this.corks.at(-1)!.push(text);
    else this.corks.push([text]);
    this.bufferedBytes += this.bytesStuckPerFrame;
    return 1;
  }

  getBufferedAmount(): number {
    return this.bufferedBytes;
  }

  get frames(): string[] {
    return this.corks.flat();
  }
}

function connection(connId: number): { conn: Connection; socket: RecordingSocket } {
  const conn = new Connection(connId, '127.0.0.1', '127.0.0.1', '127.0.0.0/24');
  const socket = new RecordingSocket();
  conn.ws = socket as unknown as WebSocket<UserData>;
  return { conn, socket };
}

const arena = new ByteArena(0);
/** A message's body (the serialized message less its `{`) put in an arena, as MakerStreams.share does. */
function shared(message: object): { text: string; bytes: ArenaBytes } {
  const text = bodyOf(JSON.stringify(message));
  const place = { chunk: 0, offset: 0, length: 0 };
  return { text, bytes: bytesAt(arena.put(text, place), place) };
}

const endOfTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('the socket writer (issue 35)', () => {
  it('writes a turn’s frames at its end, one cork per socket, in order, each seq spliced before the shared bytes', async () => {
    const slow: Connection[] = [];
    const writer = new SocketWriter(1 << 20, (conn) => slow.push(conn));
    const a = connection(1);
    const b = connection(2);
    const rfq1 = shared({ type: 'rfq', request_id: 'r1', note: 'é — multi-byte' });
    const rfq2 = shared({ type: 'rfq', request_id: 'r2' });
    const bigSeq = 12_345_678_901;
    writer.queue(a.conn, '{"type":"auth_result","success":true}');
    writer.queueStamped(a.conn, 1, rfq1.bytes);
    writer.queueStamped(b.conn, bigSeq, rfq1.bytes);
    // A later task of the same turn (as a second shard message is: microtasks ran in between) shares the flush.
    await Promise.resolve();
    writer.queueStamped(a.conn, 2, rfq2.bytes);
    writer.queueStamped(b.conn, bigSeq + 1, rfq2.bytes);
    assert.deepEqual([a.socket.corks, b.socket.corks], [[], []], 'nothing is written before the turn ends');
    await endOfTurn();
    assert.deepEqual(a.socket.corks, [['{"type":"auth_result","success":true}', stamp(1, rfq1.text), stamp(2, rfq2.text)]]);
    assert.deepEqual(b.socket.corks, [[stamp(bigSeq, rfq1.text), stamp(bigSeq + 1, rfq2.text)]]);
    for (const frame of b.socket.frames) JSON.parse(frame); // each one whole JSON message
    await endOfTurn();
    assert.equal(a.socket.corks.length, 1, 'a socket is flushed once per turn');
    assert.deepEqual(slow, []);
  });

  it('a socket whose reader stopped: the send buffer is read after each cork of 64 frames, then nothing more is written', async () => {
    const closed: Connection[] = [];
    const softLimitBytes = 10_000;
    const writer = new SocketWriter(softLimitBytes, (conn) => closed.push(conn));
    const { conn, socket } = connection(1);
    socket.bytesStuckPerFrame = 200; // past the limit within the first cork (64 x 200 > 10,000)
    const rfq = shared({ type: 'rfq', request_id: 'r' });
    for (let seq = 1; seq <= 200; seq++) writer.queueStamped(conn, seq, rfq.bytes);
    await endOfTurn();
    assert.deepEqual(
      socket.corks.map((c) => c.length),
      [64],
    );
    assert.equal(conn.isSlow, true);
    assert.deepEqual(closed, [conn], 'handed to closeSlow once');
    assert.equal(writer.isSlow(conn), true);
    writer.queueStamped(conn, 201, rfq.bytes);
    await endOfTurn();
    assert.equal(socket.frames.length, 64, 'a slow socket is written no more');
  });

  it(`a socket's queue is written at once when it reaches ${MAX_QUEUED_FRAMES} frames, the rest at the turn's end`, async () => {
    const writer = new SocketWriter(1 << 30, () => assert.fail('not slow'));
    const { conn, socket } = connection(1);
    const rfq = shared({ type: 'rfq', request_id: 'r' });
    for (let seq = 1; seq <= MAX_QUEUED_FRAMES + 10; seq++) writer.queueStamped(conn, seq, rfq.bytes);
    assert.equal(socket.frames.length, MAX_QUEUED_FRAMES, 'the full queue was written before the turn ended');
    await endOfTurn();
    assert.deepEqual(
      socket.frames.map((f) => (JSON.parse(f) as { seq: number }).seq),
      Array.from({ length: MAX_QUEUED_FRAMES + 10 }, (_, i) => i + 1),
    );
  });

  it('a closed socket is written nothing: what was queued for it stays only in its stream', async () => {
    const writer = new SocketWriter(1 << 20, () => assert.fail('not slow'));
    const { conn, socket } = connection(1);
    writer.queueStamped(conn, 1, shared({ type: 'rfq', request_id: 'r' }).bytes);
    conn.isClosed = true;
    await endOfTurn();
    assert.deepEqual(socket.corks, []);
    assert.deepEqual(conn.pending, []);
  });
});
