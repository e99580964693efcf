// Main thread. User login and logout (contract section 3). Makers never use these: they log in over the
// WebSocket (mm/), and a registered maker address logging in here is 403 FORBIDDEN (contract section 11).
import { defineRoute, json } from '../route.js';
import { errors } from '../../lib/errors.js';
import type { Services } from '../services.js';
import {
  LogoutResponse,
  SessionLoginRequest,
  SessionResponse,
  WalletChallengeRequest,
  WalletChallengeResponse,
  WalletLoginRequest,
} from '../../contract/auth.js';

/** What these routes use of the services: no more (routes get narrow dependencies). */
type AuthRouteDeps = Pick<Services, 'config' | 'jwtLogin' | 'makers' | 'sessions' | 'users' | 'walletLogin'>;

export function authRoutes(s: AuthRouteDeps) {
  /** First login of a wallet creates its user; the session is durable before the token is returned. */
  async function openSession(wallet: string) {
    if (s.makers.has(wallet)) throw errors.makerMustUseSocket();
    const user = await s.users.ensure(wallet);
    const session = await s.sessions.issueUser(user.userId, user.wallet, s.config.sessionTtlMs);
    return json(200, { session_token: session.token, expires_at_ms: session.expiresAtMs, user_id: user.userId, wallet: user.wallet });
  }

  return [
    defineRoute({
      method: 'POST',
      path: '/v1/auth/wallet/challenge',
      tag: 'auth',
      auth: 'none',
      summary: 'Get a Sign-In with Ethereum message and single-use nonce (5 min) for an address',
      body: WalletChallengeRequest,
      responses: { 200: WalletChallengeResponse },
      // Answered synchronously: a challenge writes nothing (auth/login-nonce.ts).
      handler: ({ body }) => {
        const challenge = s.walletLogin.challenge(body.address);
        return json(200, { message: challenge.message, nonce: challenge.nonce, expires_at_ms: challenge.expiresAtMs });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/auth/wallet',
      tag: 'auth',
      auth: 'none',
      summary: 'Log in with a personal-sign signature over the challenge message',
      body: WalletLoginRequest,
      responses: { 200: SessionResponse },
      // The caller's networks: the nonce it spends counts against their share (auth/nonce-spenders.ts).
      handler: async ({ body, caller }) => openSession(await s.walletLogin.verify(body.message, body.signature, caller)),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/auth/session',
      tag: 'auth',
      auth: 'none',
      summary: 'Log in with an identity-provider id_token (ES256 or EdDSA JWT with a wallet claim)',
      body: SessionLoginRequest,
      responses: { 200: SessionResponse },
      handler: async ({ body }) => openSession(await s.jwtLogin.verify(body.id_token)),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/auth/logout',
      tag: 'auth',
      auth: 'user',
      summary: 'Revoke the bearer session',
      responses: { 200: LogoutResponse },
      handler: async ({ auth }) => {
        await s.sessions.revoke(auth.sessionKey);
        return json(200, { revoked: true });
      },
    }),
  ];
}
