// A cluster gateway's main thread. The copies of the coordinator's sessions a gateway resolves bearers
// with, synchronously, as the one process resolves them from its own (auth/sessions.ts). A token it holds no
// copy of is fetched once, by its SHA-256 (the token itself never leaves the gateway), before the request is
// authorized (http/server.ts, TokenResolver.fetch); a user's session comes with the user's facts that RFQ
// admission reads (its tier and preferences), kept while a session of the user is copied here.
//
// A copy ends when its session expires (checked at each resolve, as Sessions does), when the coordinator
// tells of its revocation (coordinator-link.ts), or when the gateway takes its copies again (the coordinator
// restarted, the NATS connection broke: a revocation may have been lost). Past MAX_CACHED_SESSIONS the oldest
// copy goes (fetched again when next used), so memory is bounded whatever callers do.
import { timingSafeEqual } from 'node:crypto';
import type { Clock } from '../lib/clock.js';
import { errors } from '../lib/errors.js';
import type { MakerPrincipal, Principal, TokenResolver, UserPrincipal } from '../contract/principal.js';
import type { Preferences } from '../contract/preferences.js';
import { hashToken, MAX_CACHED_SESSIONS, type IssuedSession } from '../auth/sessions.js';
import { parseBearer } from '../http/bearer.js';
import type { SessionCopy, UserFacts } from './coordinator-wire.js';

interface Copy {
  principal: UserPrincipal | MakerPrincipal;
  expiresAtMs: number;
}

/** What the copies ask the coordinator (coordinator-link.ts). */
export interface SessionSource {
  session(sessionKey: string): Promise<SessionCopy | null>;
  issueMaker(address: string, ttlMs: number): Promise<IssuedSession>;
  revoke(sessionKey: string): Promise<void>;
}

export class SessionCopies implements TokenResolver {
  readonly #adminTokenHashHex: Buffer;
  /** token -> copy; insertion order is the eviction order. Tokens here are never logged. */
  readonly #byToken = new Map<string, Copy>();
  readonly #tokenOfKey = new Map<string, string>();
  /** userId -> the user's facts and how many of the user's sessions are copied. */
  readonly #facts = new Map<string, { facts: UserFacts; copies: number }>();
  /** sessionKey -> its fetch in flight, shared by every request that needs it meanwhile. */
  readonly #fetching = new Map<string, Promise<void>>();
  /** Keys revoked while their fetch was in flight: the answer, read before the revocation, is not kept. */
  readonly #revokedWhileFetching = new Set<string>();
  /** Moves on at every revocation of many (a maker's sessions) and at every forgetAll: fetches begun before keep nothing. */
  #epoch = 0;

  constructor(
    private readonly source: SessionSource,
    private readonly clock: Clock,
    adminToken: string,
  ) {
    this.#adminTokenHashHex = Buffer.from(hashToken(adminToken), 'latin1');
  }

  resolve(token: string): Principal | null {
    const copy = this.#byToken.get(token);
    if (copy !== undefined) {
      if (copy.expiresAtMs > this.clock.nowMs()) return copy.principal;
      this.#forgetKey(copy.principal.sessionKey);
      return null;
    }
    return this.#isAdmin(hashToken(token)) ? { kind: 'admin' } : null;
  }

  /** The copy of the bearer in `authorization` fetched from the coordinator; null when there is nothing to fetch. */
  fetch(authorization: string): Promise<void> | null {
    const token = parseBearer(authorization);
    if (token === null || this.#byToken.has(token)) return null;
    const sessionKey = hashToken(token);
    if (this.#isAdmin(sessionKey)) return null;
    const inFlight = this.#fetching.get(sessionKey);
    if (inFlight !== undefined) return inFlight;
    const epoch = this.#epoch;
    const fetched = this.source.session(sessionKey).then(
      (copy) => {
        const isStale = epoch !== this.#epoch || this.#revokedWhileFetching.has(sessionKey);
        this.#endFetch(sessionKey);
        if (copy !== null && !isStale) this.#keep(token, sessionKey, copy);
      },
      (err: unknown) => {
        this.#endFetch(sessionKey);
        throw err;
      },
    );
    this.#fetching.set(sessionKey, fetched);
    return fetched;
  }

  /** A user's tier, for RFQ admission: only asked for a user whose session was just resolved here. */
  tierOf(userId: string): number {
    return this.#factsOf(userId).tier;
  }

  /** A fresh object, as PreferencesStore.get gives. */
  preferencesOf(userId: string): Preferences {
    return { ...this.#factsOf(userId).preferences };
  }

  /** A maker's socket session, made durable by the coordinator, copied here for the socket's own use. */
  async issueMaker(address: string, ttlMs: number): Promise<IssuedSession> {
    const issued = await this.source.issueMaker(address, ttlMs);
    this.#keep(issued.token, issued.sessionKey, { kind: 'maker', address, expiresAtMs: issued.expiresAtMs });
    return issued;
  }

  async revoke(sessionKey: string): Promise<void> {
    this.forgetSessions([sessionKey]);
    await this.source.revoke(sessionKey);
  }

  /** The coordinator revoked these sessions. */
  forgetSessions(sessionKeys: readonly string[]): void {
    for (const key of sessionKeys) {
      if (this.#fetching.has(key)) this.#revokedWhileFetching.add(key);
      this.#forgetKey(key);
    }
  }

  /** The coordinator revoked every session of this maker. */
  forgetMaker(address: string): void {
    this.#epoch++;
    for (const copy of [...this.#byToken.values()]) {
      if (copy.principal.kind === 'maker' && copy.principal.address === address) this.#forgetKey(copy.principal.sessionKey);
    }
  }

  updatePreferences(userId: string, preferences: Preferences): void {
    const held = this.#facts.get(userId);
    if (held !== undefined) held.facts = { ...held.facts, preferences };
  }

  /** Every copy goes (they are fetched again as used): what the coordinator said meanwhile may be lost. */
  forgetAll(): void {
    this.#epoch++;
    this.#byToken.clear();
    this.#tokenOfKey.clear();
    this.#facts.clear();
  }

  get size(): number {
    return this.#byToken.size;
  }

  #isAdmin(sessionKey: string): boolean {
    return timingSafeEqual(Buffer.from(sessionKey, 'latin1'), this.#adminTokenHashHex);
  }

  #factsOf(userId: string): UserFacts {
    const held = this.#facts.get(userId);
    // Its session's copy went between the bearer's check and this read: asked again, it is fetched again.
    if (held === undefined) throw errors.coordinatorUnreachable();
    return held.facts;
  }

  #endFetch(sessionKey: string): void {
    this.#fetching.delete(sessionKey);
    this.#revokedWhileFetching.delete(sessionKey);
  }

  #keep(token: string, sessionKey: string, copy: SessionCopy): void {
    if (this.#byToken.has(token)) return;
    if (this.#byToken.size >= MAX_CACHED_SESSIONS) this.#forgetKey(this.#byToken.values().next().value!.principal.sessionKey);
    // Frozen: one principal object serves every request of the session, as in Sessions.
    const principal: UserPrincipal | MakerPrincipal = Object.freeze(
      copy.kind === 'user'
        ? { kind: 'user', userId: copy.userId, wallet: copy.wallet, sessionKey }
        : { kind: 'maker', address: copy.address, sessionKey },
    );
    this.#byToken.set(token, { principal, expiresAtMs: copy.expiresAtMs });
    this.#tokenOfKey.set(sessionKey, token);
    if (copy.kind !== 'user') return;
    const held = this.#facts.get(copy.userId);
    if (held === undefined) this.#facts.set(copy.userId, { facts: copy.user, copies: 1 });
    else held.copies++;
  }

  #forgetKey(sessionKey: string): void {
    const token = this.#tokenOfKey.get(sessionKey);
    if (token === undefined) return;
    const copy = this.#byToken.get(token)!;
    this.#tokenOfKey.delete(sessionKey);
    this.#byToken.delete(token);
    if (copy.principal.kind !== 'user') return;
    const held = this.#facts.get(copy.principal.userId)!;
    if (--held.copies === 0) this.#facts.delete(copy.principal.userId);
  }
}
