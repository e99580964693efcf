// Arrange helpers for market makers: register one with the admin token, and drive the maker socket with a
// WebSocket client that is not ours (the `ws` package) and a signer that is not ours (ethers). RFQ tests
// reuse these:
//
//   const maker = await registerMaker(server);              // random wallet, registered
//   const mm = await connectMaker(server, maker);            // authenticated, answers heartbeats
//   const rfq = await mm.next('rfq');                        // waits for the next rfq (skips others)
//   mm.send({ type: 'quote', request_id: rfq.request_id, quote_id: 'q1', odds: 1.9, max_wager_micros: '1000000' });
//   await mm.next('quote_ack');
//   await mm.close();
import assert from 'node:assert/strict';
import { HDNodeWallet, Wallet } from 'ethers';
import WebSocket from 'ws';
import { buildMakerChallenge, DEV_DOMAIN_TAG } from '../../src/crypto/maker-challenge.js';
import { hexToBytes } from '../../src/crypto/hex.js';
import type { AuthChallengeMessage, ServerMessageType, ServerToMakerMessage } from '../../src/contract/mm.js';
import { client } from './http.js';

/** What the helpers need of a server: a TestServer (child process) or an in-process one. */
export interface MakerTarget {
  baseUrl: string;
  wsUrl: string;
  adminToken: string;
  env?: Record<string, string>;
}

export interface TestMaker {
  wallet: HDNodeWallet | Wallet;
  /** Lowercase `0x` (the server's canonical form). */
  address: string;
  /** EIP-55 form. */
  checksumAddress: string;
  name: string;
}

export const DEFAULT_DOMAIN_TAG = DEV_DOMAIN_TAG;
export const MAKER_WS_PATH = '/v1/mm/ws';

export type ServerMessage<K extends ServerMessageType = ServerMessageType> = Extract<ServerToMakerMessage, { type: K }>;

export function domainTagOf(server: MakerTarget): string {
  return server.env?.['PARLAYD_MM_DOMAIN_TAG'] ?? DEFAULT_DOMAIN_TAG;
}

/** Collateral a test maker gets unless a test says otherwise: more than any test's fills can lock. */
export const DEFAULT_MAKER_COLLATERAL_MICROS = 1_000_000_000_000;

/**
 * Registers `wallet` (a fresh random one by default) as a maker through the admin route, and funds its
 * collateral (contract section 11: a maker quotes only what it can cover) unless `collateralMicros` is 0.
 */
export async function registerMaker(
  server: MakerTarget,
  wallet: HDNodeWallet | Wallet = Wallet.createRandom(),
  name = `maker ${wallet.address.slice(2, 8)}`,
  collateralMicros = DEFAULT_MAKER_COLLATERAL_MICROS,
): Promise<TestMaker> {
  const admin = client(server.baseUrl, server.adminToken);
  const result = await admin.post('/v1/admin/market-makers', { address: wallet.address, name });
  assert.ok(result.status === 201 || result.status === 200, JSON.stringify(result.body));
  if (collateralMicros > 0) {
    const credit = { amount_micros: collateralMicros, idempotency_key: `collateral:${wallet.address}:${name}` };
    const credited = await admin.post(`/v1/admin/market-makers/${wallet.address}/credit`, credit);
    assert.equal(credited.status, 200, JSON.stringify(credited.body));
  }
  return { wallet, address: wallet.address.toLowerCase(), checksumAddress: wallet.address, name };
}

/** A wallet as a TestMaker, without registering it. */
export function asTestMaker(wallet: HDNodeWallet | Wallet, name = 'unregistered'): TestMaker {
  return { wallet, address: wallet.address.toLowerCase(), checksumAddress: wallet.address, name };
}

/** The 75 bytes of a challenge (domain tag || nonce bytes || timestamp u64 LE). */
export function challengeBytes(challenge: AuthChallengeMessage, domainTag: string): Uint8Array {
  const nonce = hexToBytes(challenge.nonce);
  assert.ok(nonce !== null && nonce.length === 32, 'challenge nonce is not 64 hex');
  return buildMakerChallenge(domainTag, nonce, challenge.timestamp);
}

/** ethers personal-sign of the challenge bytes: `0x` + 130 hex, v = 27/28. */
export function signChallenge(wallet: HDNodeWallet | Wallet, challenge: AuthChallengeMessage, domainTag: string): Promise<string> {
  return wallet.signMessage(challengeBytes(challenge, domainTag));
}

/** Same signature with v as 0/1 instead of 27/28. */
export function withRecoveryIdV(signature: string): string {
  const v = parseInt(signature.slice(-2), 16);
  assert.ok(v === 27 || v === 28, `unexpected v ${v}`);
  return signature.slice(0, -2) + (v - 27).toString(16).padStart(2, '0');
}

export interface Closed {
  code: number;
  reason: string;
}

export interface MakerSocketOptions {
  /** Answer every heartbeat with pong (default false for a raw socket, true for connectMaker). */
  autoPong?: boolean;
  /** Default timeout of next()/closed waits, ms. */
  timeoutMs?: number;
  /** The local address to connect from (any of 127/8 on Linux): a test's second or third caller. */
  localAddress?: string;
}

/** A raw maker socket: every server message is logged and can be awaited by type. */
export class MakerSocket {
  /** Every message received, in order (including ones already taken by next()). */
  readonly received: ServerToMakerMessage[] = [];
  /**
   * The seq of each message in `received` (null before auth). Every message after a successful auth_result
   * must carry one, gapless from 1 (issue 22): the socket asserts it, so every test that uses it checks it.
   * Messages are handed out (received, next) without their seq, as the protocol's other fields compare.
   */
  readonly seqs: (number | null)[] = [];
  /** The last seq read (0 before the first). */
  lastSeq = 0;
  #isNumbered = false;
  readonly closed: Promise<Closed>;
  autoPong: boolean;
  #queue: ServerToMakerMessage[] = [];
  #waiters: { type: string | undefined; resolve: (m: ServerToMakerMessage) => void; fail: (why: string) => void }[] = [];
  #closeInfo: Closed | null = null;
  readonly #timeoutMs: number;

  private constructor(
    readonly ws: WebSocket,
    options: MakerSocketOptions,
  ) {
    this.autoPong = options.autoPong ?? false;
    this.#timeoutMs = options.timeoutMs ?? 5_000;
    ws.on('message', (data, isBinary) => {
      assert.equal(isBinary, false, 'the server sent a binary frame');
      const message = JSON.parse(data.toString()) as ServerToMakerMessage & { seq?: number };
      const seq = message.seq ?? null;
      if (this.#isNumbered) {
        assert.equal(seq, this.lastSeq + 1, `seq of ${data.toString()} after ${this.lastSeq}`);
        this.lastSeq = seq!;
      } else {
        assert.equal(seq, null, `a seq before authentication: ${data.toString()}`);
      }
      if (message.type === 'auth_result' && message.success) this.#isNumbered = true;
      delete message.seq;
      this.received.push(message);
      this.seqs.push(seq);
      if (message.type === 'heartbeat' && this.autoPong && ws.readyState === WebSocket.OPEN) {
        ws.send(JSON.stringify({ type: 'pong', ts: message.ts }));
      }
      const waiter = this.#waiters.findIndex((w) => w.type === undefined || w.type === message.type);
      if (waiter >= 0) this.#waiters.splice(waiter, 1)[0]!.resolve(message);
      else this.#queue.push(message);
    });
    this.closed = new Promise<Closed>((resolve) => {
      ws.on('close', (code, reason) => {
        this.#closeInfo = { code, reason: reason.toString() };
        resolve(this.#closeInfo);
        // Nothing more can arrive: fail the waiters now rather than at their timeouts (whose timers would
        // keep a finished test's process alive).
        for (const waiter of this.#waiters.splice(0)) waiter.fail(`socket closed ${code} ${this.#closeInfo.reason}`);
      });
    });
    ws.on('error', () => {}); // surfaced through `closed`; an unhandled 'error' would crash the test runner
  }

  /** Opens a socket to the maker path; resolves when open. */
  static async open(server: Pick<MakerTarget, 'wsUrl'>, options: MakerSocketOptions = {}): Promise<MakerSocket> {
    const ws = new WebSocket(
      server.wsUrl + MAKER_WS_PATH,
      options.localAddress === undefined ? {} : { localAddress: options.localAddress },
    );
    const socket = new MakerSocket(ws, options);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (req, res) => {
        // With this listener ws leaves the HTTP connection open; end it so nothing lingers after the test.
        req.destroy();
        reject(new Error(`upgrade refused: HTTP ${res.statusCode}`));
      });
      ws.once('error', reject);
    });
    return socket;
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** The next message of `type` (others stay queued for later calls), or of any type when omitted. */
  next<K extends ServerMessageType>(type?: K, timeoutMs = this.#timeoutMs): Promise<ServerMessage<K>> {
    const queued = this.#queue.findIndex((m) => type === undefined || m.type === type);
    if (queued >= 0) return Promise.resolve(this.#queue.splice(queued, 1)[0] as ServerMessage<K>);
    if (this.#closeInfo !== null)
      return Promise.reject(this.#noMessage(type, `socket closed ${this.#closeInfo.code} ${this.#closeInfo.reason}`));
    return new Promise<ServerMessage<K>>((resolve, reject) => {
      const waiter = {
        type,
        resolve: (m: ServerToMakerMessage) => {
          clearTimeout(timer);
          resolve(m as ServerMessage<K>);
        },
        fail: (why: string) => {
          clearTimeout(timer);
          reject(this.#noMessage(type, why));
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        reject(this.#noMessage(type, `within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  #noMessage(type: string | undefined, why: string): Error {
    return new Error(`no ${type ?? 'message'} ${why}; received ${JSON.stringify(this.received.map((m) => m.type))}`);
  }

  /** Messages received but not taken by next(), oldest first. */
  pending(): readonly ServerToMakerMessage[] {
    return this.#queue;
  }

  send(message: unknown): void {
    this.ws.send(JSON.stringify(message));
  }

  sendRaw(data: string | Buffer, options: { binary?: boolean } = {}): void {
    this.ws.send(data, { binary: options.binary ?? false });
  }

  /** Resolves with the close code and reason; rejects if the socket is still open after timeoutMs. */
  waitClosed(timeoutMs = this.#timeoutMs): Promise<Closed> {
    return Promise.race([
      this.closed,
      new Promise<never>((_, reject) => {
        const timer = setTimeout(() => reject(new Error(`socket still open after ${timeoutMs} ms`)), timeoutMs);
        void this.closed.then(() => clearTimeout(timer));
      }),
    ]);
  }

  /** Closes from the client side (normal closure) and waits for the close to complete. */
  async close(): Promise<Closed> {
    if (this.ws.readyState === WebSocket.CONNECTING || this.ws.readyState === WebSocket.OPEN) this.ws.close(1000, 'bye');
    return this.closed;
  }
}

export interface ConnectedMaker extends TestMaker {
  socket: MakerSocket;
  ws: WebSocket;
  sessionToken: string;
  expiresAtMs: number;
  next: MakerSocket['next'];
  send: MakerSocket['send'];
  close: MakerSocket['close'];
  closed: Promise<Closed>;
}

export interface ConnectOptions extends MakerSocketOptions {
  /** Sign with v = 0/1 instead of 27/28. */
  useRecoveryIdV?: boolean;
  /** Send the address lowercase instead of EIP-55. */
  lowercaseAddress?: boolean;
}

/** Opens a socket and completes the handshake; fails the test unless auth_result is a success. */
export async function connectMaker(
  server: MakerTarget,
  makerOrWallet: TestMaker | HDNodeWallet | Wallet,
  options: ConnectOptions = {},
): Promise<ConnectedMaker> {
  const maker = 'wallet' in makerOrWallet ? makerOrWallet : asTestMaker(makerOrWallet);
  const socket = await MakerSocket.open(server, { autoPong: true, ...options });
  const challenge = await socket.next('auth_challenge');
  const signature = await signChallenge(maker.wallet, challenge, domainTagOf(server));
  socket.send({
    type: 'auth_response',
    address: options.lowercaseAddress === true ? maker.address : maker.checksumAddress,
    signature: options.useRecoveryIdV === true ? withRecoveryIdV(signature) : signature,
  });
  const result = await socket.next('auth_result');
  assert.ok(result.success, `maker auth failed: ${JSON.stringify(result)}`);
  return {
    ...maker,
    socket,
    ws: socket.ws,
    sessionToken: result.session_token,
    expiresAtMs: result.expires_at_ms,
    next: socket.next.bind(socket),
    send: socket.send.bind(socket),
    close: socket.close.bind(socket),
    closed: socket.closed,
  };
}

/** registerMaker + connectMaker. */
export async function connectNewMaker(server: MakerTarget, options: ConnectOptions = {}): Promise<ConnectedMaker> {
  return connectMaker(server, await registerMaker(server), options);
}
