// Load generator, maker worker thread (started by makers.ts). Holds N maker connections on its own event
// loop, so thousands of incoming frames never delay the HTTP side's timers and answers. The connections are
// raw-ws.ts (a minimal RFC 6455 client on node:net), not `ws`: its per-frame CPU, on a 2-core machine shared
// with the server, was what the 1,000-maker fan-out figure measured. Each connection does the contract's
// handshake (sign the 75-byte challenge, EIP-191) and then follows the current policy on every `rfq`: quote
// at once, decline at once, or stay silent. For fan-out it records, per request_id, how many connections
// received the rfq and when the first and last did (epoch ms, from performance.timeOrigin +
// performance.now(), comparable with the main thread's clock).
import { parentPort } from 'node:worker_threads';
import { RawWebSocket } from './raw-ws.js';
import { buildMakerChallenge } from '../../src/crypto/maker-challenge.js';
import { hexToBytes } from '../../src/crypto/hex.js';
import { personalSign, signatureHex } from './sign.js';
import type { FanoutReceipt, MakerCommand, MakerEvent, MakerKey, MakerPolicy } from './maker-messages.js';

const port = parentPort;
if (port === null) throw new Error('maker-worker must run as a worker thread');

const sockets = new Set<RawWebSocket>();
let policy: MakerPolicy = 'quote';
let isTracking = false;
const receipts = new Map<string, FanoutReceipt>();
let rfqsReceived = 0;
let answersSent = 0;
let closedUnexpectedly = 0;
let quoteSeq = 0;

const nowEpochMs = () => performance.timeOrigin + performance.now();

// Server messages after auth_result are JSON objects whose first member is "seq" and second "type"
// (docs/maker-protocol.md, the sequenced stream; JSON.stringify keeps insertion order), so the hot ones are
// told apart by the bytes after the seq without parsing: the worker stays cheap per frame.
const SEQ_PREFIX = Buffer.from('{"seq":');
const RFQ_TYPE = Buffer.from('"type":"rfq",');
const HEARTBEAT_TYPE = Buffer.from('"type":"heartbeat"');
const REQUEST_ID_FIELD = Buffer.from('"request_id":"');
const UUID_CHARS = 36;

/** Whether the frame's member after its seq is `type` (a prefix such as RFQ_TYPE). */
function isOfType(data: Buffer, type: Buffer): boolean {
  if (!data.subarray(0, SEQ_PREFIX.length).equals(SEQ_PREFIX)) return false;
  const at = data.indexOf(0x2c, SEQ_PREFIX.length) + 1; // the ',' after the seq's digits
  return at > 0 && data.subarray(at, at + type.length).equals(type);
}

function onFrame(ws: RawWebSocket, data: Buffer): void {
  if (isOfType(data, RFQ_TYPE)) {
    const receivedMs = nowEpochMs();
    rfqsReceived++;
    const at = data.indexOf(REQUEST_ID_FIELD) + REQUEST_ID_FIELD.length;
    const requestId = data.toString('latin1', at, at + UUID_CHARS);
    if (isTracking) {
      const receipt = receipts.get(requestId);
      if (receipt === undefined) receipts.set(requestId, { count: 1, firstMs: receivedMs, lastMs: receivedMs });
      else {
        receipt.count++;
        receipt.lastMs = receivedMs;
      }
    }
    if (policy === 'quote') {
      answer(
        ws,
        `{"type":"quote","request_id":"${requestId}","quote_id":"q${(++quoteSeq).toString(36)}","odds":2.5,"max_wager_micros":"100000000000"}`,
      );
    } else if (policy === 'decline') {
      answer(ws, `{"type":"decline","request_id":"${requestId}"}`);
    }
    return;
  }
  if (isOfType(data, HEARTBEAT_TYPE)) {
    const message = JSON.parse(data.toString()) as { ts: number };
    ws.send(JSON.stringify({ type: 'pong', ts: message.ts }));
  }
  // quote_ack, rfq_result and the rest need no answer.
}

// Answers are written after every frame that arrived in the same event-loop poll has been stamped: a write
// is a system call (~10 µs), and with 1,000 sockets, answering each rfq as it is read would delay the
// receipt stamp of every later socket by the writes of all earlier ones, and measure the client. A socket
// that got several rfqs in the poll writes its answers in one frame batch, one write.
let answers = new Map<RawWebSocket, string[]>();
let isFlushScheduled = false;

function answer(ws: RawWebSocket, text: string): void {
  const queued = answers.get(ws);
  if (queued === undefined) answers.set(ws, [text]);
  else queued.push(text);
  answersSent++;
  if (isFlushScheduled) return;
  isFlushScheduled = true;
  setImmediate(flushAnswers);
}

function flushAnswers(): void {
  const batch = answers;
  answers = new Map();
  isFlushScheduled = false;
  for (const [ws, texts] of batch) ws.sendMany(texts); // dropped if the socket has closed meanwhile
}

/** One connection through the handshake; resolves once auth_result says success. */
function connectOne(port: number, domainTag: string, privateKey: Uint8Array, address: string): Promise<RawWebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new RawWebSocket(port, '/v1/mm/ws');
    let isAuthenticated = false;
    ws.onError = (err) => {
      if (!isAuthenticated) reject(err);
    };
    ws.onClose = () => {
      sockets.delete(ws);
      if (isAuthenticated && !isClosing) closedUnexpectedly++;
      if (!isAuthenticated) reject(new Error('closed before authentication'));
    };
    ws.onMessage = (data) => {
      if (isAuthenticated) return onFrame(ws, data);
      const message = JSON.parse(data.toString()) as {
        type: string;
        nonce?: string;
        timestamp?: number;
        success?: boolean;
        reason?: string;
      };
      if (message.type === 'auth_challenge') {
        const bytes = buildMakerChallenge(domainTag, hexToBytes(message.nonce!)!, message.timestamp!);
        ws.send(JSON.stringify({ type: 'auth_response', address, signature: signatureHex(personalSign(privateKey, bytes)) }));
      } else if (message.type === 'auth_result') {
        if (message.success !== true) return reject(new Error(`maker auth refused: ${message.reason}`));
        isAuthenticated = true;
        sockets.add(ws);
        resolve(ws);
      }
    };
  });
}

let isClosing = false;

/** Attempts per connection before a refusal is fatal: 30 waits of ~1 s outlast any login burst's backlog. */
const MAX_CONNECT_ATTEMPTS = 30;
/**
 * Refusals that say "not now" (contract section 2: 429 RATE_LIMITED and 503 OVERLOADED on the upgrade, an
 * auth_result or close saying OVERLOADED, AUTH_EVICTED or AUTH_TIMEOUT while the service is busy with other
 * logins): tried again after the Retry-After. Anything else (an unknown maker, TOO_MANY_SOCKETS) is fatal.
 */
const TRANSIENT_REFUSAL = /\b(429|503)\b|OVERLOADED|RATE_LIMITED|AUTH_EVICTED|AUTH_TIMEOUT|closed before authentication|ECONNRESET/;

/** One connection, its login retried after each transient refusal's Retry-After (1 s when it gives none). */
async function connectPaced(port: number, domainTag: string, key: MakerKey, retries: { count: number }): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await connectOne(port, domainTag, key.privateKey, key.checksumAddress);
      return;
    } catch (err) {
      const message = String(err);
      if (attempt >= MAX_CONNECT_ATTEMPTS || !TRANSIENT_REFUSAL.test(message)) throw err;
      retries.count++;
      const retryAfterS = Number(/Retry-After (\d+)/.exec(message)?.[1] ?? 1);
      await new Promise((resolve) => setTimeout(resolve, retryAfterS * 1000));
    }
  }
}

async function connectMany(command: Extract<MakerCommand, { kind: 'connect' }>): Promise<void> {
  const startMs = performance.now();
  const wsPort = Number(new URL(command.wsUrl).port);
  const retries = { count: 0 };
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(command.concurrency, command.keys.length) }, async () => {
      while (next < command.keys.length) {
        const key = command.keys[next++]!;
        await connectPaced(wsPort, command.domainTag, key, retries);
      }
    }),
  );
  reply({ kind: 'connected', connected: sockets.size, ms: performance.now() - startMs, retries: retries.count });
}

async function closeAll(): Promise<void> {
  isClosing = true;
  await Promise.all([...sockets].map((ws) => ws.close(1000, 'bye')));
  isClosing = false;
  reply({ kind: 'closed' });
}

function reply(event: MakerEvent): void {
  port!.postMessage(event);
}

port.on('message', (command: MakerCommand) => {
  switch (command.kind) {
    case 'connect':
      connectMany(command).catch((err: unknown) => reply({ kind: 'failed', message: String(err) }));
      return;
    case 'policy':
      policy = command.policy;
      isTracking = command.isTracking;
      receipts.clear();
      return reply({ kind: 'ok' });
    case 'receipt': {
      const receipt = receipts.get(command.requestId) ?? null;
      receipts.delete(command.requestId);
      return reply({ kind: 'receipt', receipt });
    }
    case 'stats':
      return reply({ kind: 'stats', connected: sockets.size, rfqsReceived, answersSent, closedUnexpectedly });
    case 'close':
      closeAll().catch((err: unknown) => reply({ kind: 'failed', message: String(err) }));
      return;
    default: {
      const unknown: never = command;
      throw new Error(`unknown maker command ${JSON.stringify(unknown)}`);
    }
  }
});
