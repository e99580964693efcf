// Any process of a cluster. What gateways and the coordinator say to each other (docs/scaling.md, "The
// coordinator"): a gateway asks for what it holds copies of (a session, the makers, the markets), has the
// coordinator make and end makers' sessions for its sockets, and forwards every request it does not serve
// itself; the coordinator tells every gateway what changed of those copies.
import type { StoredMarket } from '../contract/markets.js';
import type { Preferences } from '../contract/preferences.js';
import type { MakerRecord, ProtectionLimits } from '../records/makers.js';
export type { ForwardedReply, ForwardedRequest } from '../http/forwarding.js';

/** A user's facts an RFQ's admission reads: they come with each of the user's sessions. */
export interface UserFacts {
  tier: number;
  preferences: Preferences;
}

/** A live session as the coordinator holds it, for a gateway's copy (the token itself never crosses). */
export type SessionCopy =
  | { kind: 'user'; userId: string; wallet: string; expiresAtMs: number; user: UserFacts }
  | { kind: 'maker'; address: string; expiresAtMs: number };

export type CoordinatorCall =
  /** The coordinator's incarnation (drawn at its start): a gateway's beat. */
  | { k: 'hello' }
  /** The live session whose token hashes to `sessionKey`, or null. */
  | { k: 'session'; sessionKey: string }
  /** A maker's session for a socket that passed its challenge on a gateway (durable before the answer). */
  | { k: 'issue-maker'; address: string; ttlMs: number }
  | { k: 'revoke'; sessionKey: string }
  /** A page of the registered makers, in address order after `after`. */
  | { k: 'makers'; after: string | null }
  /** A page of the market records, in key order after `afterKey`. */
  | { k: 'markets'; afterKey: string | null }
  /** A page of the makers' protection limits (mm/protection.ts), in key order after `afterKey`. */
  | { k: 'protection'; afterKey: string | null };

export type CoordinatorAnswer<T> = { ok: true; value: T } | { ok: false; message: string };

export interface Page<T> {
  items: T[];
  /** The key to ask after for the next page; null on the last. */
  next: string | null;
}

export interface IssuedMakerSession {
  token: string;
  sessionKey: string;
  expiresAtMs: number;
}

export type CoordinatorChange =
  | { k: 'revoked'; sessionKeys: string[] }
  | { k: 'maker-sessions-revoked'; address: string }
  | { k: 'maker'; address: string; maker: MakerRecord | null }
  | { k: 'preferences'; userId: string; preferences: Preferences }
  | { k: 'markets'; markets: StoredMarket[] }
  | ({ k: 'protection' } & ProtectionCopy);

/** One side's protection limits of one maker. */
export interface ProtectionCopy {
  side: 'maker' | 'admin';
  address: string;
  limits: ProtectionLimits;
}

/** Makers per page of `makers` (a record encodes in under 150 bytes; MAX_MAKERS is 10,000). */
export const MAKERS_PER_PAGE = 2_000;
/** Protection limits per page of `protection` (two sides of MAX_MAKERS at the most). */
export const PROTECTION_PER_PAGE = 2_000;
/** Markets per page of `markets` (a record encodes in ~400 bytes). */
export const MARKETS_PER_PAGE = 1_024;
