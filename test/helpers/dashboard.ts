// Arrange helpers for the dashboard tests: RFQs that flow through real makers (the `ws` client, signed by
// ethers) and a funded taker, and a client of the dashboard's live feed.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { connectMaker, registerMaker } from './makers.js';
import { autoQuote, fundedTaker, unsignedBody } from './rfq.js';
import type { TestServer } from './server.js';
import { waitFor } from './wait.js';

export const FEED_PATH = '/v1/admin/dashboard/ws';

export interface RfqFlow {
  /** RFQs answered so far (each waited for its terminal result). */
  readonly done: number;
  stop(): Promise<void>;
}

/** Pause between two RFQs of the flow: at most ~100 a second, whatever the machine's speed. */
const FLOW_PAUSE_MS = 10;
/**
 * The taker's funds: 2 USDC an RFQ for 50,000 RFQs, over 8 minutes of flow at its pace. Unpaced, a fast
 * machine filled the 500 RFQs 1,000 USDC paid for in under 2 s, before the page had drawn its charts.
 */
const FLOW_FUNDS_MICROS = 100_000_000_000;

/**
 * Two makers quoting every RFQ (one with a last look it accepts) and a taker sending one RFQ after another
 * (each waits for its result, then FLOW_PAUSE_MS), until stop().
 */
export async function startRfqFlow(server: TestServer): Promise<RfqFlow> {
  const makers = await Promise.all([registerMaker(server), registerMaker(server)]);
  const [plain, lastLook] = await Promise.all(makers.map((maker) => connectMaker(server, maker)));
  const quoting = [autoQuote(plain!, { odds: 1.8 }), autoQuote(lastLook!, { odds: 1.9, isLastLook: true, lastLookAnswer: true })];
  const { market, api } = await fundedTaker(server, FLOW_FUNDS_MICROS);
  let done = 0;
  let isStopped = false;
  const loop = (async () => {
    while (!isStopped) {
      const res = await api.post('/v1/rfq/unsigned?wait_ms=3000', unsignedBody([{ market_id: market, direction: 'up' }]));
      assert.ok(res.status === 200 || res.status === 201, JSON.stringify(res.body));
      done++;
      await sleep(FLOW_PAUSE_MS);
    }
  })();
  return {
    get done() {
      return done;
    },
    stop: async () => {
      isStopped = true;
      await loop;
      for (const q of quoting) q.stop();
      await Promise.all([plain!.close(), lastLook!.close()]);
    },
  };
}

export interface FeedClient {
  messages: Array<Record<string, unknown>>;
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves with the first message (seen or to come) that matches. */
  next(match: (m: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  close(): void;
}

/** Opens the feed and sends `token` as its first message. */
export function openFeed(server: TestServer, token: string): Promise<FeedClient> {
  const ws = new WebSocket(server.wsUrl + FEED_PATH);
  const messages: Array<Record<string, unknown>> = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  ws.on('message', (data) => messages.push(JSON.parse(data.toString()) as Record<string, unknown>));
  const next = (match: (m: Record<string, unknown>) => boolean, timeoutMs = 10_000) =>
    waitFor(() => messages.find(match) ?? false, {
      timeoutMs,
      get what() {
        return `a matching feed message (received: ${JSON.stringify(messages).slice(0, 500)})`;
      },
    });
  return new Promise((resolve, reject) => {
    ws.once('error', reject);
    ws.once('open', () => {
      ws.send(JSON.stringify({ type: 'auth', token }));
      resolve({ messages, closed, next, close: () => ws.close() });
    });
  });
}

export interface IdleFeed {
  closed: Promise<{ code: number; reason: string }>;
  isOpen(): boolean;
  /** Sends its token after all: the auth message openFeed sends at once. */
  authenticate(token: string): void;
  close(): void;
}

/**
 * Opens the feed from `localAddress` (any of 127/8 on Linux: another caller) and sends nothing, as a socket
 * holding a place would; rejects with `HTTP <status>` when the upgrade is refused.
 */
export function openIdleFeed(server: TestServer, localAddress: string): Promise<IdleFeed> {
  const ws = new WebSocket(server.wsUrl + FEED_PATH, { localAddress });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  return new Promise((resolve, reject) => {
    ws.once('unexpected-response', (req, res) => {
      req.destroy();
      reject(new Error(`HTTP ${res.statusCode}`));
    });
    ws.once('error', reject);
    ws.once('open', () =>
      resolve({
        closed,
        isOpen: () => ws.readyState === WebSocket.OPEN,
        authenticate: (token) => ws.send(JSON.stringify({ type: 'auth', token })),
        close: () => ws.close(),
      }),
    );
  });
}

/** The value of an unlabelled line, or the sum of a metric's lines, in the /metrics text. */
export function metricSum(text: string, name: string): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(name + ' ') || line.startsWith(name + '{'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}
