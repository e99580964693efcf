// Main thread. A route is declared once: its schemas validate and type the handler, and the OpenAPI document
// is generated from the same objects (http/openapi.ts). Schemas are compiled once, at registration.
import type { Static, TSchema } from '@sinclair/typebox';
import type { Logger } from 'pino';
import type { AdminPrincipal, MakerPrincipal, UserPrincipal } from '../contract/principal.js';
import type { CallerNetworks } from '../auth/nonce-spenders.js';
import type { Method } from './router.js';
import type { Paging } from '../contract/paging.js';

/** none: no bearer read. optional-user: no bearer is fine, a bad one is 401. */
export type AuthMode = 'none' | 'user' | 'optional-user' | 'maker' | 'admin';

type AuthFor<A extends AuthMode> = A extends 'user'
  ? UserPrincipal
  : A extends 'optional-user'
    ? UserPrincipal | null
    : A extends 'maker'
      ? MakerPrincipal
      : A extends 'admin'
        ? AdminPrincipal
        : null;

type StaticOr<S, Fallback> = S extends TSchema ? Static<S> : Fallback;

export interface Reply {
  status: number;
  /** JSON-serialized unless `contentType` is set, in which case it must be a string or bytes. */
  body: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface RequestContext<A extends AuthMode, B, Q, P> {
  requestId: string;
  log: Logger;
  auth: AuthFor<A>;
  body: StaticOr<B, undefined>;
  query: StaticOr<Q, Record<string, never>>;
  params: StaticOr<P, Record<string, never>>;
  /** Aborted when the client goes away, so long waits (wait_ms) can stop early. */
  signal: AbortSignal;
  /** The caller's IP and network on the auth routes (/v1/auth/*, which limit them); null on the others. */
  caller: CallerNetworks | null;
  /**
   * The request's cursor and its next_cursor, bound to this route, caller and filter (contract/paging.ts). Only
   * a route whose query has `cursor` has one; reading it on another route is a bug and throws.
   */
  paging: Paging;
  /**
   * The rate-limit bucket the request was charged one token to (null: not limited, e.g. the admin), for a
   * route whose request carries many units of work and pays for the others (oracle.ts).
   */
  rateKey: string | null;
}

export interface RouteSpec<A extends AuthMode, B, Q, P> {
  method: Method;
  path: string;
  summary: string;
  tag: string;
  auth: A;
  body?: B;
  query?: Q;
  params?: P;
  /** Success responses by status; error responses are the contract's ErrorBody for every route. */
  responses: Record<number, TSchema>;
  /** Content type of a non-JSON success body (images, metrics text). */
  produces?: string;
  /** Body limit of this route when it must exceed the contract's 64 KiB (an admin image upload). */
  maxBodyBytes?: number;
  /**
   * The route starts work (an RFQ create): under overload it is refused with 503 OVERLOADED before its
   * handler runs, and its body has a short deadline (http/load-shedder.ts, http/unread-bodies.ts).
   */
  isShedUnderLoad?: boolean;
  /**
   * The route shows money or RFQs the caller's own acknowledged writes moved (a balance after a fill, a
   * history after a 201): on the journal engine, whose LMDB read model is written behind, its handler runs
   * after every shard's read barrier (read-barriers.ts). Other views may lag by the writer's interval.
   */
  readsOwnWrites?: boolean;
  handler: (ctx: RequestContext<A, B, Q, P>) => Promise<Reply> | Reply;
}

/** The erased form the router stores. */
export type AnyRoute = RouteSpec<AuthMode, TSchema | undefined, TSchema | undefined, TSchema | undefined>;

export function defineRoute<
  A extends AuthMode,
  B extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  P extends TSchema | undefined = undefined,
>(spec: RouteSpec<A, B, Q, P>): AnyRoute {
  return spec as unknown as AnyRoute;
}

export const json = (status: number, body: unknown): Reply => ({ status, body });
