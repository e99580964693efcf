// A MakerGateway on its own uWS app, in this process, with the real store, sessions, registry and verify
// pool: the RFQ engine's side of the gateway (dispatcher, broadcast, send) is reachable only from here.
// Used by mm/gateway.test.ts and the SDK tests (sdk/maker-client, sdk/resume).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import uWS, { type us_listen_socket } from 'uWebSockets.js';
import { Wallet, type HDNodeWallet } from 'ethers';
import { systemClock } from '../../src/lib/clock.js';
import { Sessions } from '../../src/auth/sessions.js';
import { VerifyPool } from '../../src/crypto/verify-pool.js';
import { MakerGateway, type MakerDispatcher, type MakerGatewayDeps } from '../../src/mm/gateway.js';
import { MAKER_WS_PATH } from '../../src/contract/maker-protocol.js';
import { MakerRegistry } from '../../src/mm/registry.js';
import { openStore, type Store } from '../../src/store/db.js';
import { DEFAULT_DOMAIN_TAG, type TestMaker } from './makers.js';

export interface StandaloneGateway {
  baseUrl: string;
  wsUrl: string;
  adminToken: string;
  env: Record<string, string>;
  gateway: MakerGateway;
  /** What the gateway hands makers' RFQ messages to: it records them, as the desk would receive them. */
  dispatcher: RecordingDispatcher;
  registry: MakerRegistry;
  sessions: Sessions;
  store: Store;
  register(wallet?: HDNodeWallet | Wallet): Promise<TestMaker>;
  close(): Promise<void>;
}

export interface StandaloneOptions {
  config?: Partial<MakerGatewayDeps['config']>;
  maxPendingAuth?: number;
  /** Wraps the verify pool, e.g. to hold recoveries until the test releases them. */
  wrapVerifyPool?: (pool: MakerGatewayDeps['verifyPool']) => MakerGatewayDeps['verifyPool'];
}

/** A verify pool wrapper that holds every recovery until release() (deterministic "while verifying"). */
export function gatedVerifyPool() {
  let open: () => void = () => {};
  let gate = new Promise<void>((resolve) => (open = resolve));
  let held = 0;
  let completed = 0;
  return {
    wrap: (pool: MakerGatewayDeps['verifyPool']): MakerGatewayDeps['verifyPool'] => ({
      recoverPersonalSigner: async (message, sig65) => {
        held++;
        await gate;
        const result = await pool.recoverPersonalSigner(message, sig65);
        completed++;
        return result;
      },
    }),
    /** Recoveries started so far (held or released). */
    get held() {
      return held;
    },
    /** Recoveries whose result has been handed back to the gateway. */
    get completed() {
      return completed;
    },
    release() {
      open();
    },
    reset() {
      gate = new Promise<void>((resolve) => (open = resolve));
    },
  };
}

export async function startStandaloneGateway(options: StandaloneOptions = {}): Promise<StandaloneGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parlayd-gw-'));
  const store = openStore(dataDir);
  const adminToken = 'standalone-admin-token-0123456789';
  const registry = new MakerRegistry(store, systemClock);
  const sessions = new Sessions(store, systemClock, adminToken);
  const verifyPool = new VerifyPool({ threads: 1 });
  const gateway = new MakerGateway({
    config: {
      mmDomainTag: DEFAULT_DOMAIN_TAG,
      cluster: null,
      mmAuthTimeoutMs: 10_000,
      mmChallengeTtlMs: 30_000,
      mmHeartbeatMs: 15_000,
      mmSessionTtlMs: 3_600_000,
      mmMaxBufferedBytes: 1 << 20,
      mmMaxPendingAuthPerIp: 16,
      mmMaxPendingAuth: 1024,
      mmMaxPendingAuthPerNetwork: 64,
      mmPressureAuthTimeoutMs: 2_000,
      mmMaxSocketsPerMaker: 4,
      mmFramesPerS: 10_000,
      mmFrameBurst: 20_000,
      mmRefusalLogIntervalMs: 10_000,
      mmReplayMs: 30_000,
      mmReplayMaxMessages: 4096,
      ...options.config,
    },
    clock: systemClock,
    log: pino({ level: 'silent' }),
    registry,
    sessions,
    verifyPool: options.wrapVerifyPool?.(verifyPool) ?? verifyPool,
    ...(options.maxPendingAuth === undefined ? {} : { maxPendingAuth: options.maxPendingAuth }),
  });
  const app = uWS.App();
  const dispatcher = new RecordingDispatcher();
  app.ws(MAKER_WS_PATH, gateway.attach(dispatcher));
  const listenSocket = await new Promise<us_listen_socket>((resolve, reject) =>
    app.listen('127.0.0.1', 0, (socket) => (socket === false ? reject(new Error('listen failed')) : resolve(socket))),
  );
  const port = uWS.us_socket_local_port(listenSocket);
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    adminToken,
    env: {},
    gateway,
    dispatcher,
    registry,
    sessions,
    store,
    register: async (wallet = Wallet.createRandom()) => {
      const address = wallet.address.toLowerCase();
      await registry.add(address, 'standalone');
      return { wallet, address, checksumAddress: wallet.address, name: 'standalone' };
    },
    close: async () => {
      gateway.close();
      uWS.us_listen_socket_close(listenSocket);
      await verifyPool.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export type DispatchEvent =
  | { kind: 'quote' | 'decline' | 'quote_cancel' | 'last_look_response'; makerId: string; address: string; msg: Record<string, unknown> }
  | { kind: 'quote_cancel_all' | 'protection_reset'; makerId: string; address: string }
  | { kind: 'rfqs_replayed'; makerId: string; requestIds: string[] }
  | { kind: 'disconnected'; makerId: string; address: string };

/** A dispatcher that records every call, and lets a test wait for the next one. */
export class RecordingDispatcher implements MakerDispatcher {
  readonly events: DispatchEvent[] = [];
  #waiters: { match: (e: DispatchEvent) => boolean; resolve: (e: DispatchEvent) => void }[] = [];

  onQuote = (makerId: string, address: string, msg: object) => this.#record({ kind: 'quote', makerId, address, msg: { ...msg } });
  onDecline = (makerId: string, address: string, msg: object) => this.#record({ kind: 'decline', makerId, address, msg: { ...msg } });
  onQuoteCancel = (makerId: string, address: string, msg: object) =>
    this.#record({ kind: 'quote_cancel', makerId, address, msg: { ...msg } });
  onLastLookResponse = (makerId: string, address: string, msg: object) =>
    this.#record({ kind: 'last_look_response', makerId, address, msg: { ...msg } });
  onQuoteCancelAll = (makerId: string, address: string) => this.#record({ kind: 'quote_cancel_all', makerId, address });
  onProtectionReset = (makerId: string, address: string) => this.#record({ kind: 'protection_reset', makerId, address });
  onRfqsReplayed = (makerId: string, requestIds: string[]) => this.#record({ kind: 'rfqs_replayed', makerId, requestIds });
  onMakerDisconnected = (makerId: string, address: string) => this.#record({ kind: 'disconnected', makerId, address });

  /** The first recorded event (past or future) matching, within timeoutMs. */
  waitFor(match: (e: DispatchEvent) => boolean, timeoutMs = 5_000): Promise<DispatchEvent> {
    const seen = this.events.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = {
        match,
        resolve: (e: DispatchEvent) => {
          clearTimeout(timer);
          resolve(e);
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        reject(new Error(`no matching dispatch within ${timeoutMs} ms; got ${JSON.stringify(this.events.map((e) => e.kind))}`));
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  #record(event: DispatchEvent): void {
    this.events.push(event);
    for (const waiter of [...this.#waiters]) {
      if (!waiter.match(event)) continue;
      this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      waiter.resolve(event);
    }
  }
}
