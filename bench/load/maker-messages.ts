// Load generator, both threads. The messages between the main thread and the maker worker, declared once
// as discriminated unions (STYLE: one module for what crosses a thread boundary).

/** What a maker does with each rfq: quote at once (odds 2.5, ample size), decline at once, or nothing. */
export type MakerPolicy = 'quote' | 'decline' | 'silent';

export interface MakerKey {
  privateKey: Uint8Array;
  checksumAddress: string;
}

export interface FanoutReceipt {
  /** Connections that received the rfq. */
  count: number;
  /** Epoch ms (performance.timeOrigin + performance.now()) of the first and last receipt. */
  firstMs: number;
  lastMs: number;
}

export type MakerCommand =
  /** One new connection per key (a key may appear several times: one address, several sockets). */
  | { kind: 'connect'; wsUrl: string; domainTag: string; keys: MakerKey[]; concurrency: number }
  | { kind: 'policy'; policy: MakerPolicy; isTracking: boolean }
  | { kind: 'receipt'; requestId: string }
  | { kind: 'stats' }
  | { kind: 'close' };

export type MakerEvent =
  /** `retries`: logins refused for now (429/503, or closed before auth_result) and tried again. */
  | { kind: 'connected'; connected: number; ms: number; retries: number }
  | { kind: 'ok' }
  | { kind: 'receipt'; receipt: FanoutReceipt | null }
  | { kind: 'stats'; connected: number; rfqsReceived: number; answersSent: number; closedUnexpectedly: number }
  | { kind: 'closed' }
  | { kind: 'failed'; message: string };
