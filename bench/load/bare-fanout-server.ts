// `node dist/bench/load/bare-fanout-server.js`: the denominator of the fan-out ratios (scenario `fanout`), as
// ceiling-server.ts is for GET. A plain uWebSockets.js server that sends the service's rfq frame (the same
// bytes: toRfqMessage's JSON behind each socket's own seq, src/mm/stream.ts stamp) to every connected socket,
// and nothing else: no auth (an open socket is told auth_result success at once, so the bench's maker farm
// connects unchanged), no parse, no store, no shard. POST /rfq sends one rfq to every socket and answers 201
// `{"request_id", "status":"timeout"}` once every socket has declined it, the way the service's
// wait_ms answer ends when every maker has declined: the same client drives both the same way. The rfqs of
// every POST read in one event-loop poll are written per socket under one cork (setImmediate: after the
// poll), the most batching a plain server gets, as the service's SocketWriter batches a shard's events: a
// reference that wrote each rfq on its own made one write per socket per RFQ and fell behind the service.
// Prints {"port": N} on stdout once listening.
import { randomUUID } from 'node:crypto';
import uWS, { type HttpResponse, type WebSocket } from 'uWebSockets.js';
import { bodyOf, stamp } from '../../src/mm/stream.js';
import { toRfqMessage } from '../../src/rfq/announcement.js';

/** An rfq no socket finishes declining in this long is answered anyway, as not delivered (the bench's WAIT_MS). */
const ANSWER_TIMEOUT_MS = 5000;
/** The farm's decline (maker-worker.ts): `{"type":"decline","request_id":"` then the 36-character id. */
const DECLINE_ID_AT = '{"type":"decline","request_id":"'.length;
const UUID_CHARS = 36;

interface Socket {
  nextSeq: number;
}

/** One POST /rfq: its response, and whether the client has gone (uWS forbids using it then). */
interface Call {
  res: HttpResponse;
  isAborted: boolean;
}

interface Waiting {
  remaining: number;
  call: Call;
  timer: NodeJS.Timeout;
}

const sockets = new Set<WebSocket<Socket>>();
const waiting = new Map<string, Waiting>();
/** Rfq bodies (the serialized message less its `{`) to write after this poll, to every socket. */
let queued: string[] = [];

/** The frame the service sends for a 3-leg unsigned RFQ of the bench (rfq-traffic.ts), with this id. */
function rfqBody(requestId: string): string {
  const nowMs = Date.now();
  const message = toRfqMessage(
    requestId,
    {
      legs: [
        { marketId: 1, direction: 'up' },
        { marketId: 2, direction: 'down' },
        { marketId: 3, direction: 'up' },
      ],
      wagerMicros: '1000000',
      orderType: 2,
      isShielded: false,
      wallet: '0x' + '0'.repeat(40),
      tier: 0,
    },
    { createdAtMs: nowMs, quoteDeadlineMs: nowMs + 250, expiresAtMs: nowMs + 500 },
  );
  return bodyOf(JSON.stringify(message));
}

function flush(): void {
  const bodies = queued;
  queued = [];
  for (const ws of sockets) {
    const data = ws.getUserData();
    ws.cork(() => {
      for (const body of bodies) ws.send(stamp(data.nextSeq++, body), false);
    });
  }
}

function answer(requestId: string, status: string): void {
  const entry = waiting.get(requestId);
  if (entry === undefined) return;
  waiting.delete(requestId);
  clearTimeout(entry.timer);
  const res = entry.call.res;
  if (entry.call.isAborted) return;
  res.cork(() => {
    res.writeStatus('201 Created').writeHeader('Content-Type', 'application/json');
    res.end(`{"request_id":"${requestId}","status":"${status}"}`);
  });
}

function onRfq(call: Call): void {
  const requestId = randomUUID();
  const entry: Waiting = {
    remaining: sockets.size,
    call,
    timer: setTimeout(() => answer(requestId, 'missed'), ANSWER_TIMEOUT_MS),
  };
  waiting.set(requestId, entry);
  if (entry.remaining === 0) return answer(requestId, 'timeout');
  if (queued.length === 0) setImmediate(flush);
  queued.push(rfqBody(requestId));
}

const app = uWS.App();
app.ws<Socket>('/v1/mm/ws', {
  compression: uWS.DISABLED,
  maxPayloadLength: 16 * 1024,
  idleTimeout: 0,
  maxBackpressure: 64 * 1024 * 1024,
  upgrade: (res, req, context) => {
    res.upgrade<Socket>(
      { nextSeq: 1 },
      req.getHeader('sec-websocket-key'),
      req.getHeader('sec-websocket-protocol'),
      req.getHeader('sec-websocket-extensions'),
      context,
    );
  },
  open: (ws) => {
    sockets.add(ws);
    ws.send('{"type":"auth_result","success":true}', false);
  },
  message: (_ws, frame) => {
    if (frame.byteLength !== DECLINE_ID_AT + UUID_CHARS + 2) return;
    const requestId = Buffer.from(frame).toString('latin1', DECLINE_ID_AT, DECLINE_ID_AT + UUID_CHARS);
    const entry = waiting.get(requestId);
    if (entry !== undefined && --entry.remaining === 0) answer(requestId, 'timeout');
  },
  close: (ws) => {
    sockets.delete(ws);
  },
});
app.post('/rfq', (res) => {
  const call: Call = { res, isAborted: false };
  res.onAborted(() => {
    call.isAborted = true;
  });
  // The bench sends the service's RFQ body: read to its end, as the service reads it, then ignored.
  res.onData((_chunk, isLast) => {
    if (isLast) onRfq(call);
  });
});
app.get('/*', (res) => {
  res.cork(() => res.end('{}'));
});
app.listen('127.0.0.1', 0, (socket) => {
  if (socket === false) throw new Error('bare fan-out server: cannot listen');
  process.stdout.write(JSON.stringify({ port: uWS.us_socket_local_port(socket) }) + '\n');
});
