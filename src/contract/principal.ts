// Who a bearer token belongs to. Resolved once per request by the HTTP layer (http/bearer.ts).

export interface UserPrincipal {
  kind: 'user';
  userId: string;
  wallet: string;
  /** sha256(token) hex: the session's key, used by logout. Never the token itself. */
  sessionKey: string;
}

export interface MakerPrincipal {
  kind: 'maker';
  address: string;
  sessionKey: string;
}

export interface AdminPrincipal {
  kind: 'admin';
}

export type Principal = UserPrincipal | MakerPrincipal | AdminPrincipal;

/** What turns a bearer token into its principal: the sessions (auth/sessions.ts), asked by http/bearer.ts. */
export interface TokenResolver {
  /** The principal of a live token, or null when unknown, expired or revoked. */
  resolve(token: string): Principal | null;
  /**
   * A resolver that holds copies (a cluster's gateway: cluster/session-copies.ts): the copy of the bearer in
   * `authorization` fetched, when it has none yet; null when resolve already answers for it. The request is
   * authorized once this settles.
   */
  fetch?(authorization: string): Promise<void> | null;
}
