// Main thread. Bearer sessions for users and makers (contract section 3). A token is 256 random bits,
// base64url; only its SHA-256 is stored, so a copy of the data directory lets nobody log in. The admin token
// comes from configuration and is compared in constant time.
//
// Every authenticated request resolves its bearer, so live sessions are also kept in memory (`#live`, by
// token): a hit skips the SHA-256 and the LMDB read (~3 µs of a ~10 µs GET, docs/performance.md). This class
// is the only writer of the sessions database, so it can keep the two in step: a revocation drops the
// entry before and again after its write commits (a read in between may have cached the old record).
//
// A maker's sessions are also indexed by its address (`makerSessions`, written in the session's transaction),
// so removing a maker revokes its sessions without reading every session of every user.
//
// Expired records are deleted by an expiry sweep (expiry-sweep.ts, also used for login nonces by
// wallet-login.ts): nothing else would ever remove a session that was not logged out, nor a login nonce that
// was never used, and the challenge route that writes nonces needs no auth.
import assert from 'node:assert/strict';
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../lib/clock.js';
import type { Store } from '../store/db.js';
import { ExpirySweep, type ExpirySweepOptions, type SweepBatchResult } from './expiry-sweep.js';
import type { MakerPrincipal, Principal, TokenResolver, UserPrincipal } from '../contract/principal.js';
import { metaTable, table } from '../store/records.js';
import type { SessionRecord } from '../records/auth.js';

export interface IssuedSession {
  token: string;
  sessionKey: string;
  expiresAtMs: number;
}

/** One-shot hash straight to hex: ~0.7 µs against ~3 µs for createHash + digest + toString (every request). */
export function hashToken(token: string): string {
  return hash('sha256', token);
}

/** Bound on sessions held in memory; past it the oldest cached entry is dropped (it still resolves from LMDB). */
export const MAX_CACHED_SESSIONS = 65_536;

interface LiveSession {
  principal: UserPrincipal | MakerPrincipal;
  expiresAtMs: number;
}

/** What was revoked (told after its write committed): sessions by key, or every session of a maker. */
export type Revocation = { sessionKeys: string[] } | { makerAddress: string };

export class Sessions implements TokenResolver {
  /** Told of each revocation once it is durable (a cluster's coordinator tells its gateways: coordinator-door.ts). */
  onRevoked: ((revocation: Revocation) => void) | null = null;
  /** Hex SHA-256 of the admin token, as bytes of its text (what resolve compares against). */
  private readonly adminTokenHashHex: Buffer;
  /** token -> live session; insertion order is the eviction order. Tokens here are never logged. */
  readonly #live = new Map<string, LiveSession>();
  /** sessionKey -> token of the entries in #live, so a logout finds its entry without a scan. */
  readonly #tokenOfKey = new Map<string, string>();

  readonly #sweep: ExpirySweep;
  /** Of the maker index: its entries expire with their sessions. */
  readonly #indexSweep: ExpirySweep;

  /** Starts the expiry sweep of the sessions database (first batch at once, then periodically). */
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    adminToken: string,
    sweepOptions: ExpirySweepOptions = {},
  ) {
    this.adminTokenHashHex = Buffer.from(hashToken(adminToken), 'latin1');
    // Dropped from the cache once the removal committed. No read can re-cache a swept record in between:
    // resolve never caches an expired one, and the sweep removes only expired ones.
    this.#sweep = new ExpirySweep(store, 'sessions', clock, (keys) => keys.forEach((key) => this.#forgetKey(key)), sweepOptions);
    this.#sweep.start();
    indexMakerSessionsOnce(store);
    this.#indexSweep = new ExpirySweep(store, 'makerSessions', clock, () => {}, sweepOptions);
    this.#indexSweep.start();
  }

  /** One bounded batch of the expiry sweep, now (the timer runs them on its own; tests call this). */
  sweepExpiredBatch(): Promise<SweepBatchResult> {
    return this.#sweep.sweepBatch();
  }

  /** Stops the periodic sweep; call before closing the store. */
  stopSweeping(): void {
    this.#sweep.stop();
    this.#indexSweep.stop();
  }

  private get sessions() {
    return table(this.store, 'sessions');
  }

  private get makerSessions() {
    return table(this.store, 'makerSessions');
  }

  /** The end (Unix ms) of the stored session `sessionKey`, or null once it is gone (revoked, swept). */
  expiresAtMsOf(sessionKey: string): number | null {
    return this.sessions.get(sessionKey)?.expiresAtMs ?? null;
  }

  /** Durable before it resolves: the caller hands the token to a client right after. */
  async issueUser(userId: string, wallet: string, ttlMs: number): Promise<IssuedSession> {
    // Anyone can log in (a new wallet each time): past the room new work may use, no new user session is
    // written, so logins cannot eat the reserve kept for ending accepted work (503 OVERLOADED).
    this.store.assertRoom();
    return this.issue((createdAtMs, expiresAtMs) => ({ kind: 'user', userId, wallet, createdAtMs, expiresAtMs }), ttlMs);
  }

  async issueMaker(address: string, ttlMs: number): Promise<IssuedSession> {
    return this.issue((createdAtMs, expiresAtMs) => ({ kind: 'maker', address, createdAtMs, expiresAtMs }), ttlMs);
  }

  async revoke(sessionKey: string): Promise<void> {
    this.#forgetKey(sessionKey);
    await this.sessions.remove(sessionKey);
    this.#forgetKey(sessionKey);
    this.onRevoked?.({ sessionKeys: [sessionKey] });
  }

  /** Revokes every maker session of an address (maker removed from the registry): a range of the index, no scan. */
  async revokeMaker(address: string): Promise<void> {
    const isRevoked = (live: LiveSession) => live.principal.kind === 'maker' && live.principal.address === address;
    this.#forget(isRevoked);
    await this.store.transact(() => {
      for (const { key } of this.makerSessions.getRange(makerIndexRange(address))) {
        void this.sessions.remove(key.slice(address.length + 1));
        void this.makerSessions.remove(key);
      }
    });
    this.#forget(isRevoked);
    this.onRevoked?.({ makerAddress: address });
  }

  /** The stored session `sessionKey` while it is live (unexpired, not revoked); undefined otherwise. */
  liveRecordOf(sessionKey: string): SessionRecord | undefined {
    const record = this.sessions.get(sessionKey);
    return record === undefined || record.expiresAtMs <= this.clock.nowMs() ? undefined : record;
  }

  resolve(token: string): Principal | null {
    const live = this.#live.get(token);
    if (live !== undefined) {
      if (live.expiresAtMs > this.clock.nowMs()) return live.principal;
      this.#forgetKey(live.principal.sessionKey);
      return null;
    }
    // The admin check compares the hex digests in constant time; the admin token is never cached.
    const sessionKey = hashToken(token);
    if (timingSafeEqual(Buffer.from(sessionKey, 'latin1'), this.adminTokenHashHex)) return { kind: 'admin' };
    const record = this.sessions.get(sessionKey);
    if (record === undefined || record.expiresAtMs <= this.clock.nowMs()) return null;
    // Frozen: one principal object now serves every request of the session.
    const principal: UserPrincipal | MakerPrincipal = Object.freeze(
      record.kind === 'user'
        ? { kind: 'user', userId: record.userId, wallet: record.wallet, sessionKey }
        : { kind: 'maker', address: record.address, sessionKey },
    );
    if (this.#live.size >= MAX_CACHED_SESSIONS) {
      const oldest = this.#live.values().next().value!;
      this.#forgetKey(oldest.principal.sessionKey);
    }
    this.#live.set(token, { principal, expiresAtMs: record.expiresAtMs });
    this.#tokenOfKey.set(sessionKey, token);
    return principal;
  }

  #forget(isRevoked: (live: LiveSession) => boolean): void {
    for (const live of [...this.#live.values()]) if (isRevoked(live)) this.#forgetKey(live.principal.sessionKey);
  }

  #forgetKey(sessionKey: string): void {
    const token = this.#tokenOfKey.get(sessionKey);
    if (token === undefined) return;
    this.#tokenOfKey.delete(sessionKey);
    this.#live.delete(token);
  }

  private async issue(make: (createdAtMs: number, expiresAtMs: number) => SessionRecord, ttlMs: number): Promise<IssuedSession> {
    const token = randomBytes(32).toString('base64url');
    const sessionKey = hashToken(token);
    const createdAtMs = this.clock.nowMs();
    const expiresAtMs = createdAtMs + ttlMs;
    // The sweep asserts the same on every record it reads.
    assert.ok(Number.isSafeInteger(expiresAtMs), 'a session expiry is an integer of ms');
    const record = make(createdAtMs, expiresAtMs);
    if (record.kind === 'user') {
      await this.sessions.put(sessionKey, record);
    } else {
      await this.store.transact(() => {
        void this.sessions.put(sessionKey, record);
        void this.makerSessions.put(makerIndexKey(record.address, sessionKey), { expiresAtMs });
      });
    }
    return { token, sessionKey, expiresAtMs };
  }
}

const makerIndexKey = (address: string, sessionKey: string) => `${address}:${sessionKey}`;
/** Every index key of one address (lowercase hex and ':' sort below '~'). */
const makerIndexRange = (address: string) => ({ start: `${address}:`, end: `${address}:~` });

const MAKER_INDEX_MARK = 'migration:maker-session-index:v1';

/**
 * Data directories from before the index hold maker sessions it does not know: one scan indexes them, once
 * (a mark in `meta`), synchronously at start, before any request. Without it a maker removed in the first
 * hour after the upgrade would keep its older sessions.
 */
function indexMakerSessionsOnce(store: Store): void {
  const meta = metaTable<boolean>(store);
  if (meta.get(MAKER_INDEX_MARK) === true) return;
  const sessions = table(store, 'sessions');
  const index = table(store, 'makerSessions');
  store.root.transactionSync(() => {
    for (const { key, value } of sessions.getRange()) {
      if (value.kind === 'maker') void index.put(makerIndexKey(value.address, key), { expiresAtMs: value.expiresAtMs });
    }
    void meta.put(MAKER_INDEX_MARK, true);
  });
}
