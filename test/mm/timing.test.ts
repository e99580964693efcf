// The maker gateway's timing rules (interface.md "Limits", contract section 7, issue 21 item 1), in process:
// the real MakerGateway with its authenticator, heartbeat, upgrade gate and sender, over a real LMDB store,
// real sessions and the real verify pool, on a manual clock, so each deadline is checked to the millisecond
// at the configured defaults without sleeping. Only the sockets are stand-ins (the edge of the world): uWS
// hands the gateway's handlers a WebSocket and an HttpResponse, and these record what the gateway does with
// them. The wire, uWS and real timers are the end-to-end tests' part (deadlines, heartbeat, session,
// pending-auth-eviction). A row is one rule: how the sockets are set up, how far time moves, what the
// gateway must have done by then.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { pino } from 'pino';
import type { HttpRequest, HttpResponse, us_socket_context_t, WebSocket, WebSocketBehavior } from 'uWebSockets.js';
import { Sessions } from '../../src/auth/sessions.js';
import { loadConfig } from '../../src/config/config.js';
import { VerifyPool } from '../../src/crypto/verify-pool.js';
import { RateLimiter } from '../../src/lib/rate-limit.js';
import type { UserData } from '../../src/mm/connection.js';
import { MakerGateway, type MakerGatewayDeps } from '../../src/mm/gateway.js';
import { MakerRegistry } from '../../src/mm/registry.js';
import type { ServerMessageType } from '../../src/contract/mm.js';
import { openStore, type Store } from '../../src/store/db.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { signChallenge, type ServerMessage } from '../helpers/makers.js';
import { gatedVerifyPool, RecordingDispatcher } from '../helpers/standalone-gateway.js';
import { waitFor } from '../helpers/wait.js';

const START_MS = 1_800_000_000_000;
/** The service's defaults: 10 s to authenticate (2 s under pressure), 30 s challenge, 15 s heartbeat, 1 h session. */
const DEFAULTS = loadConfig({});
const AUTH_TIMEOUT_MS = DEFAULTS.mmAuthTimeoutMs;
const PRESSURE_AUTH_TIMEOUT_MS = DEFAULTS.mmPressureAuthTimeoutMs;
const CHALLENGE_TTL_MS = DEFAULTS.mmChallengeTtlMs;
const HEARTBEAT_MS = DEFAULTS.mmHeartbeatMs;
const SESSION_TTL_MS = DEFAULTS.mmSessionTtlMs;

interface Closed {
  code: number;
  reason: string;
}

type Message = { type: string } & Record<string, unknown>;

/**
 * What uWS's WebSocket is to the gateway (send, cork, getBufferedAmount, end, getUserData): frames the gateway
 * writes are parsed and kept, their seq dropped; end() runs the gateway's close handler at once, as uWS does.
 * The maker's side: fromMaker (a frame), closeFromMaker.
 */
class FakeSocket {
  readonly received: Message[] = [];
  closed: Closed | null = null;
  #waiters: { type: string; resolve: (m: Message) => void }[] = [];

  constructor(
    private readonly userData: UserData,
    private readonly behavior: WebSocketBehavior<UserData>,
  ) {}

  get isOpen(): boolean {
    return this.closed === null;
  }

  /** The types received so far, in order. */
  get types(): string[] {
    return this.received.map((m) => m.type);
  }

  /** The last message of `type` received so far; fails when there is none. */
  last<K extends ServerMessageType>(type: K): ServerMessage<K> {
    for (let i = this.received.length - 1; i >= 0; i--)
      if (this.received[i]!.type === type) return this.received[i] as unknown as ServerMessage<K>;
    assert.fail(`no ${type} among ${JSON.stringify(this.types)}`);
  }

  /** The first message of `type`, received already or to come (auth waits on the verify pool and LMDB). */
  next<K extends ServerMessageType>(type: K): Promise<ServerMessage<K>> {
    const found = this.received.find((m) => m.type === type);
    if (found !== undefined) return Promise.resolve(found as unknown as ServerMessage<K>);
    return new Promise((resolve) => this.#waiters.push({ type, resolve: resolve as (m: Message) => void }));
  }

  /** A text frame from the maker (uWS calls the message handler). */
  fromMaker(message: unknown): void {
    this.behavior.message!(this.#asWebSocket, new TextEncoder().encode(JSON.stringify(message)).buffer, false);
  }

  /** The maker closes the socket (uWS calls the close handler). */
  closeFromMaker(): void {
    this.closed = { code: 1000, reason: 'bye' };
    this.behavior.close!(this.#asWebSocket, 1000, new ArrayBuffer(0));
  }

  get #asWebSocket(): WebSocket<UserData> {
    return this as unknown as WebSocket<UserData>;
  }

  // --- what the gateway calls --------------------------------------------------------------------------

  getUserData(): UserData {
    return this.userData;
  }

  getBufferedAmount(): number {
    return 0;
  }

  cork(fn: () => void): this {
    fn();
    return this;
  }

  send(frame: string | Uint8Array): number {
    // A numbered frame comes as bytes (a view of the writer's scratch buffer, valid during the call only).
    const text = typeof frame === 'string' ? frame : new TextDecoder().decode(frame);
    const { seq: _seq, ...message } = JSON.parse(text) as Message & { seq?: number };
    this.received.push(message);
    for (const waiter of [...this.#waiters]) {
      if (waiter.type !== message.type) continue;
      this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      waiter.resolve(message);
    }
    return 1;
  }

  end(code: number, reason: string): void {
    this.closed = { code, reason };
    this.behavior.close!(this.#asWebSocket, code, new TextEncoder().encode(reason).buffer);
  }
}

/** An upgrade the gateway refused: the HTTP answer. */
interface Refusal {
  status: string;
  retryAfter: string;
  code: string;
}

interface Harness {
  clock: ManualClock;
  gateway: MakerGateway;
  /** Opens a maker socket from `remote` through the gateway's upgrade handler: the socket, or the refusal. */
  open(remote?: string): FakeSocket | Refusal;
  /** Opens a socket the gateway accepts (fails on a refusal). */
  connect(remote?: string): FakeSocket;
  /** The maker's signed auth_response to the challenge the socket got. */
  authResponse(socket: FakeSocket): Promise<{ type: 'auth_response'; address: string; signature: string }>;
  /** A socket that authenticated as the file's registered maker. */
  authenticated(): Promise<FakeSocket>;
}

interface HarnessOptions {
  config?: Partial<MakerGatewayDeps['config']> | undefined;
  maxPendingAuth?: number | undefined;
  rateLimiter?: MakerGatewayDeps['rateLimiter'];
  wrapVerifyPool?: ((pool: MakerGatewayDeps['verifyPool']) => MakerGatewayDeps['verifyPool']) | undefined;
}

let dataDir: string;
let store: Store;
let verifyPool: VerifyPool;
let registry: MakerRegistry;
/** The one registered maker (a maker address may hold several connections). */
const makerWallet = new Wallet('0x' + randomBytes(32).toString('hex'));
/** What each test started, stopped after it. */
const cleanups: (() => Promise<void> | void)[] = [];

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'parlayd-mm-timing-'));
  store = openStore(dataDir);
  verifyPool = new VerifyPool({ threads: 1 });
  registry = new MakerRegistry(store, new ManualClock(START_MS));
  await registry.add(makerWallet.address.toLowerCase(), 'timing');
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
after(async () => {
  await verifyPool.close();
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A gateway on its own manual clock, with the service's default timings unless the row changes them. */
function harness(options: HarnessOptions = {}): Harness {
  const clock = new ManualClock(START_MS);
  const sessions = new Sessions(store, clock, 'timing-admin-token-0123456789');
  const config = { ...DEFAULTS, ...options.config };
  const gateway = new MakerGateway({
    config,
    clock,
    log: pino({ level: 'silent' }),
    registry,
    sessions,
    verifyPool: options.wrapVerifyPool?.(verifyPool) ?? verifyPool,
    ...(options.maxPendingAuth === undefined ? {} : { maxPendingAuth: options.maxPendingAuth }),
    ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
    // No event loop turns on a manual clock: each frame is written as it is queued.
    endOfTurn: (flush) => flush(),
  });
  // The handlers attach returns are what uWS would call; no app is involved.
  const behavior = gateway.attach(new RecordingDispatcher());
  cleanups.push(() => {
    gateway.close();
    sessions.stopSweeping();
  });

  const open = (remote = '127.0.0.1'): FakeSocket | Refusal => {
    let opened: FakeSocket | null = null;
    let refusal: Refusal | null = null;
    const headers: Record<string, string> = {};
    let status = '';
    const res = {
      getRemoteAddressAsText: () => new TextEncoder().encode(remote).buffer,
      cork: (fn: () => void) => fn(),
      writeStatus: (line: string) => ((status = line), res),
      writeHeader: (name: string, value: string) => ((headers[name] = value), res),
      end: (body: string) => (refusal = { status, retryAfter: headers['Retry-After']!, code: (JSON.parse(body) as { code: string }).code }),
      // uWS opens the socket (the open handler) inside upgrade.
      upgrade: (userData: UserData) => {
        opened = new FakeSocket(userData, behavior);
        behavior.open!(opened as unknown as WebSocket<UserData>);
      },
    } as unknown as HttpResponse;
    const req = { getHeader: () => '' } as unknown as HttpRequest;
    behavior.upgrade!(res, req, {} as us_socket_context_t);
    const result = opened ?? refusal;
    assert.ok(result !== null, 'the upgrade handler neither upgraded nor answered');
    return result;
  };
  const connect = (remote?: string): FakeSocket => {
    const socket = open(remote);
    if (!(socket instanceof FakeSocket)) assert.fail(`upgrade refused: ${JSON.stringify(socket)}`);
    assert.deepEqual(socket.types, ['auth_challenge']);
    return socket;
  };
  const authResponse = async (socket: FakeSocket) => {
    const challenge = socket.last('auth_challenge');
    const signature = await signChallenge(makerWallet, challenge, config.mmDomainTag);
    return { type: 'auth_response' as const, address: makerWallet.address, signature };
  };
  const authenticated = async () => {
    const socket = connect();
    socket.fromMaker(await authResponse(socket));
    const result = await socket.next('auth_result');
    assert.equal(result.success, true, JSON.stringify(result));
    return socket;
  };
  return { clock, gateway, open, connect, authResponse, authenticated };
}

function assertClosedWithError(socket: FakeSocket, code: string, closed: Closed): void {
  assert.deepEqual(socket.closed, closed);
  assert.equal(socket.last('error').code, code);
  assert.equal(socket.received.at(-1)?.type, 'error', 'the error is the last message before the close');
}

describe('the auth deadline: a socket that has not authenticated by then gets error AUTH_TIMEOUT and a close 1008', () => {
  const rows: { rule: string; maxPendingAuth?: number; config?: HarnessOptions['config']; openedBefore: number; deadlineMs: number }[] = [
    { rule: 'a socket alone: the auth timeout, though its challenge is still valid', openedBefore: 0, deadlineMs: AUTH_TIMEOUT_MS },
    {
      rule: 'the socket that takes half the places: still the auth timeout',
      maxPendingAuth: 4,
      openedBefore: 1,
      deadlineMs: AUTH_TIMEOUT_MS,
    },
    {
      rule: 'a socket past half the places: the short deadline under pressure',
      maxPendingAuth: 4,
      openedBefore: 2,
      deadlineMs: PRESSURE_AUTH_TIMEOUT_MS,
    },
    {
      rule: 'under pressure with a pressure deadline above the auth timeout: the auth timeout, the shorter',
      maxPendingAuth: 4,
      config: { mmPressureAuthTimeoutMs: AUTH_TIMEOUT_MS * 2 },
      openedBefore: 2,
      deadlineMs: AUTH_TIMEOUT_MS,
    },
  ];
  for (const row of rows) {
    it(`${row.rule} (${row.deadlineMs} ms)`, () => {
      const h = harness({ config: row.config, maxPendingAuth: row.maxPendingAuth });
      for (let i = 0; i < row.openedBefore; i++) h.connect(`127.0.0.${10 + i}`);
      const socket = h.connect();
      h.clock.advance(row.deadlineMs - 1);
      assert.equal(socket.isOpen, true, 'closed before its deadline');
      assert.deepEqual(socket.types, ['auth_challenge'], 'nothing but the challenge before auth (no heartbeat)');
      h.clock.advance(1);
      assertClosedWithError(socket, 'AUTH_TIMEOUT', { code: 1008, reason: 'AUTH_TIMEOUT' });
      assert.deepEqual(socket.types, ['auth_challenge', 'error']);
    });
  }

  it('a socket that authenticated in time is not closed by its auth deadline', async () => {
    const h = harness();
    const socket = await h.authenticated();
    h.clock.advance(AUTH_TIMEOUT_MS * 2); // one heartbeat, unanswered: far from closing
    assert.equal(socket.isOpen, true);
    assert.equal(socket.types.includes('error'), false, JSON.stringify(socket.received));
  });

  it('a socket that timed out gives its place back', () => {
    const h = harness({ maxPendingAuth: 1 });
    h.connect();
    assert.equal(h.gateway.pendingCount, 1);
    h.clock.advance(AUTH_TIMEOUT_MS);
    assert.equal(h.gateway.pendingCount, 0);
    h.connect();
  });
});

describe('the challenge lifetime: an auth_response is taken until the challenge expires, in server milliseconds', () => {
  const rows: { rule: string; answeredAtMs: number; authenticates: boolean }[] = [
    { rule: 'answered 1 ms before the challenge expires: authenticated', answeredAtMs: CHALLENGE_TTL_MS - 1, authenticates: true },
    {
      rule: 'answered when the challenge expires: auth_result CHALLENGE_EXPIRED and a close 1008',
      answeredAtMs: CHALLENGE_TTL_MS,
      authenticates: false,
    },
  ];
  for (const row of rows) {
    it(`${row.rule} (at ${row.answeredAtMs} ms)`, async () => {
      // An auth deadline past the challenge's lifetime, so that the challenge is what decides.
      const h = harness({ config: { mmAuthTimeoutMs: CHALLENGE_TTL_MS * 2 } });
      const socket = h.connect();
      const response = await h.authResponse(socket); // signed at once; sent late
      h.clock.advance(row.answeredAtMs);
      socket.fromMaker(response);
      const result = await socket.next('auth_result');
      if (row.authenticates) {
        assert.equal(result.success, true, JSON.stringify(result));
        assert.equal(socket.isOpen, true);
      } else {
        assert.deepEqual(result, { type: 'auth_result', success: false, reason: 'CHALLENGE_EXPIRED' });
        assert.deepEqual(socket.closed, { code: 1008, reason: 'CHALLENGE_EXPIRED' });
      }
    });
  }
});

describe('the session: at its expiry the server sends AUTH_EXPIRED and closes 1008 AUTH_EXPIRED', () => {
  it(`not a millisecond before expires_at_ms (${SESSION_TTL_MS} ms after auth), then AUTH_EXPIRED {expired_at_ms}`, async () => {
    // The heartbeat out of the way: this row is the session's; the heartbeat's rows are below.
    const h = harness({ config: { mmHeartbeatMs: SESSION_TTL_MS * 2 } });
    const socket = await h.authenticated();
    const result = socket.last('auth_result');
    assert.ok(result.success);
    const expiresAtMs = result.expires_at_ms;
    assert.equal(expiresAtMs, START_MS + SESSION_TTL_MS, 'the sessions and the gateway read one clock');
    h.clock.advance(SESSION_TTL_MS - 1);
    assert.equal(socket.isOpen, true);
    assert.deepEqual(socket.types, ['auth_challenge', 'auth_result']);
    h.clock.advance(1);
    assert.deepEqual(socket.received.slice(2), [{ type: 'AUTH_EXPIRED', expired_at_ms: expiresAtMs }]);
    assert.deepEqual(socket.closed, { code: 1008, reason: 'AUTH_EXPIRED' });
  });

  it('a socket that closes before its session ends leaves no timer behind', async () => {
    const h = harness();
    const socket = await h.authenticated();
    assert.equal(h.clock.pendingTimers, 2, 'the heartbeat and the session');
    socket.closeFromMaker();
    assert.equal(h.clock.pendingTimers, 1, 'the heartbeat only');
    const pending = h.connect();
    assert.equal(h.clock.pendingTimers, 2, 'the heartbeat and the auth deadline');
    pending.closeFromMaker();
    assert.equal(h.clock.pendingTimers, 1, 'the heartbeat only');
  });
});

describe('the heartbeat: one interval for every authenticated socket; three unanswered close it', () => {
  it(`a heartbeat each ${HEARTBEAT_MS} ms from the start, ts the clock's now, to every authenticated socket`, async () => {
    const h = harness();
    const sockets = [await h.authenticated(), await h.authenticated()];
    h.clock.advance(HEARTBEAT_MS - 1);
    for (const socket of sockets) assert.deepEqual(socket.types, ['auth_challenge', 'auth_result']);
    h.clock.advance(1);
    for (const socket of sockets) assert.deepEqual(socket.last('heartbeat'), { type: 'heartbeat', ts: START_MS + HEARTBEAT_MS });
    for (const socket of sockets) socket.fromMaker({ type: 'pong', ts: START_MS + HEARTBEAT_MS });
    h.clock.advance(HEARTBEAT_MS);
    for (const socket of sockets) assert.deepEqual(socket.last('heartbeat'), { type: 'heartbeat', ts: START_MS + 2 * HEARTBEAT_MS });
  });

  const rows: { rule: string; answers: (tick: number) => 'pong' | 'malformed pong' | null; ticks: number; closesAtTick: number | null }[] =
    [
      {
        rule: 'never answered: error HEARTBEAT_TIMEOUT and a close 1008 at the tick after the third',
        answers: () => null,
        ticks: 6,
        closesAtTick: 4,
      },
      { rule: 'answered every time: open', answers: () => 'pong', ticks: 12, closesAtTick: null },
      {
        rule: 'a pong resets the count: answering every third keeps it open',
        answers: (tick) => (tick % 3 === 0 ? 'pong' : null),
        ticks: 12,
        closesAtTick: null,
      },
      {
        rule: 'answered after the first only: closed at the tick after the fourth',
        answers: (tick) => (tick === 1 ? 'pong' : null),
        ticks: 8,
        closesAtTick: 5,
      },
      {
        rule: 'a malformed pong (ts a string) is not an answer: VALIDATION_FAILED, and closed as if silent',
        answers: () => 'malformed pong',
        ticks: 6,
        closesAtTick: 4,
      },
    ];
  for (const row of rows) {
    it(row.rule, async () => {
      const h = harness();
      const socket = await h.authenticated();
      for (let tick = 1; tick <= row.ticks && socket.isOpen; tick++) {
        h.clock.advance(HEARTBEAT_MS);
        if (tick === row.closesAtTick) break;
        assert.equal(socket.isOpen, true, `closed at tick ${tick}`);
        const beat = socket.last('heartbeat');
        assert.equal(beat.ts, h.clock.nowMs());
        const answer = row.answers(tick);
        if (answer === 'pong') socket.fromMaker({ type: 'pong', ts: beat.ts });
        if (answer === 'malformed pong') {
          socket.fromMaker({ type: 'pong', ts: String(beat.ts) });
          assert.equal(socket.last('error').code, 'VALIDATION_FAILED');
        }
      }
      const heartbeats = socket.types.filter((t) => t === 'heartbeat').length;
      if (row.closesAtTick === null) {
        assert.equal(socket.isOpen, true);
        assert.equal(heartbeats, row.ticks);
      } else {
        assertClosedWithError(socket, 'HEARTBEAT_TIMEOUT', { code: 1008, reason: 'HEARTBEAT_TIMEOUT' });
        assert.equal(heartbeats, row.closesAtTick - 1, 'the closing tick sends no heartbeat');
      }
    });
  }

  it('a socket awaiting auth gets no heartbeat', () => {
    const h = harness({ config: { mmAuthTimeoutMs: HEARTBEAT_MS * 4 } });
    const socket = h.connect();
    h.clock.advance(HEARTBEAT_MS * 4 - 1);
    assert.deepEqual(socket.types, ['auth_challenge']);
  });

  it("the gateway's close stops the heartbeat and every deadline: no timer is left", async () => {
    const h = harness();
    await h.authenticated();
    h.connect();
    assert.equal(h.clock.pendingTimers, 3, 'the heartbeat, a session, an auth deadline');
    h.gateway.close();
    assert.equal(h.clock.pendingTimers, 0);
  });
});

describe('eviction: every place for sockets awaiting auth taken, the oldest idle one makes room', () => {
  it('the oldest socket still awaiting its auth_response gets error AUTH_EVICTED and a close 1013; the newcomer its challenge', () => {
    const h = harness({ maxPendingAuth: 3 });
    const sockets = [h.connect('127.0.0.21'), h.connect('127.0.0.22'), h.connect('127.0.0.23')];
    h.clock.advance(1);
    h.connect('127.0.0.24');
    assertClosedWithError(sockets[0]!, 'AUTH_EVICTED', { code: 1013, reason: 'AUTH_EVICTED' });
    assert.equal(sockets[1]!.isOpen && sockets[2]!.isOpen, true, 'one eviction per newcomer');
    assert.equal(h.gateway.pendingCount, 3);
  });

  it('a socket being verified is not idle: the oldest after it is evicted; every one verifying, 503 OVERLOADED', async () => {
    const gate = gatedVerifyPool();
    cleanups.push(async () => {
      gate.release(); // after the gateway's close (cleanups run last first): the verifications end on closed sockets
      await waitFor(() => gate.completed === gate.held, { what: 'the held verifications to end' });
    });
    const h = harness({ maxPendingAuth: 2, wrapVerifyPool: gate.wrap });
    const verifying = h.connect('127.0.0.31');
    const idle = h.connect('127.0.0.32');
    verifying.fromMaker(await h.authResponse(verifying));
    await waitFor(() => gate.held === 1, { what: 'the recovery to be held' });
    const newcomer = h.connect('127.0.0.33');
    assert.deepEqual(idle.closed, { code: 1013, reason: 'AUTH_EVICTED' });
    assert.equal(verifying.isOpen, true);
    newcomer.fromMaker(await h.authResponse(newcomer));
    await waitFor(() => gate.held === 2, { what: 'the second recovery to be held' });
    assert.deepEqual(h.open('127.0.0.34'), { status: '503 Service Unavailable', retryAfter: '1', code: 'OVERLOADED' });
  });
});

describe('the upgrade spends a token of the caller’s HTTP bucket, at the clock’s time', () => {
  it('a second upgrade before a token is back: 429 RATE_LIMITED with Retry-After 1; once it is back, a socket', () => {
    const h = harness({ rateLimiter: new RateLimiter({ perSecond: 1, burst: 1 }) });
    h.connect();
    assert.deepEqual(h.open(), { status: '429 Too Many Requests', retryAfter: '1', code: 'RATE_LIMITED' });
    h.clock.advance(999);
    assert.equal((h.open() as Refusal).status, '429 Too Many Requests', 'a token is not back before a second');
    h.clock.advance(1);
    h.connect();
  });
});
