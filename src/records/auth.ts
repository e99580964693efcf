// Any thread. The durable shapes of sessions, the makers' session index and used login nonces (auth/).

export type SessionRecord =
  | { kind: 'user'; userId: string; wallet: string; createdAtMs: number; expiresAtMs: number }
  | { kind: 'maker'; address: string; createdAtMs: number; expiresAtMs: number };

/** An entry of the maker session index; it expires with its session (the sweep deletes both). */
export interface MakerSessionIndexRecord {
  expiresAtMs: number;
}

/** A used nonce, kept until it would have expired anyway (then no login can name it: it is refused as expired). */
export interface UsedNonceRecord {
  expiresAtMs: number;
}
