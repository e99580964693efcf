// Main thread. A route is declared once: its schemas validate and type the handler, and the OpenAPI document
// is generated from the same objects (http/openapi.ts). Schemas are compiled once, at registration. A paged
// list declares how it pages (`paged`) and its handler returns items and a position; defineRoute turns it
// into an ordinary route that reads the cursor and writes next_cursor, so every list answers the same way.
import type { Static, TSchema } from '@sinclair/typebox';
import type { Logger } from 'pino';
import type { AdminPrincipal, MakerPrincipal, UserPrincipal } from '../contract/principal.js';
import type { CallerNetworks } from '../auth/nonce-spenders.js';
import type { Method } from './router.js';
import type { Paging, PositionValue } from '../contract/paging.js';

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
   * The rate-limit bucket the request was charged one token to (null: not limited, e.g. the admin), for a
   * route whose request carries many units of work and pays for the others (oracle.ts).
   */
  rateKey: string | null;
}

/**
 * The query of a paged route: it has the `limit` and `cursor` properties (contract/paging.ts
 * pageQueryProperties), named in its `properties`, where compiled-route.ts isPagedRoute looks for `cursor`.
 */
type PageQuery = TSchema & { properties: { limit: TSchema; cursor: TSchema }; static: { limit?: number; cursor?: string } };

/**
 * The request's cursor and its next_cursor, bound to this route, caller and filter (contract/paging.ts), on
 * the context of a route whose query is a PageQuery; any other route has no `paging` to read, so asking for
 * it does not compile (at run time the getter throws, http/exchange.ts).
 */
type PagingOf<Q> = Q extends PageQuery ? { paging: Paging } : unknown;

interface RouteBase<A extends AuthMode, B, Q, P> {
  method: Method;
  path: string;
  summary: string;
  tag: string;
  auth: A;
  body?: B;
  query?: Q;
  params?: P;
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
}

export interface RouteSpec<A extends AuthMode, B, Q, P> extends RouteBase<A, B, Q, P> {
  /** Success responses by status; error responses are the contract's ErrorBody for every route. */
  responses: Record<number, TSchema>;
  /** A route whose handler builds its own reply has none (a paged list is a PagedRouteSpec). */
  paged?: never;
  handler: (ctx: RequestContext<A, B, Q, P> & PagingOf<Q>) => Promise<Reply> | Reply;
}

/** How a list pages (contract section 13), for the route layer to read `cursor` and write `next_cursor`. */
export interface PageOption<K extends string, Pos extends readonly PositionValue[]> {
  /** The answer's list field, written before `next_cursor`. */
  items: K;
  /** The page length without `limit` (the query schema states the maximum). */
  defaultLimit: number;
  /** The shape of this route's position, its sort key: a cursor that holds another is 400 at /cursor. */
  isPosition: (values: readonly unknown[]) => values is Pos;
}

/** What a paged handler is asked for: the page after `after` (null: the first page), of `limit` items at most. */
export interface PageRequest<Pos> {
  after: Pos | null;
  limit: number;
}

/** What a paged handler answers: its items, and the position of the last one when a page follows (else null). */
export interface Page<Items, Pos> {
  items: Items;
  next: Pos | null;
}

/** A list answer: a list field beside `next_cursor` (contract/paging.ts nextCursorProperty). */
type PageList = TSchema & { static: { next_cursor: string | null } };
/** The list field of a list answer: an array, and its one property besides next_cursor (else never). */
type ListField<R extends PageList, S = Static<R>> = {
  [F in keyof S]: F extends 'next_cursor'
    ? never
    : S[F] extends readonly unknown[]
      ? Exclude<keyof S, F | 'next_cursor'> extends never
        ? F
        : never
      : never;
}[keyof S] &
  string;
/** The items of list field `K` of answer `R`. */
type ItemsOf<R extends PageList, K extends string> = K extends keyof Static<R> ? Static<R>[K] : never;

/**
 * A paged list: the route layer decodes the cursor with `paged.isPosition`, gives the handler the position
 * and the limit, and answers 200 `{ [paged.items]: items, next_cursor }` with the next position encoded.
 * The items are typed by the 200 schema's list field, the positions by the guard.
 */
export interface PagedRouteSpec<
  A extends AuthMode,
  B,
  Q extends PageQuery,
  P,
  R extends PageList,
  K extends string,
  Pos extends readonly PositionValue[],
> extends RouteBase<A, B, Q, P> {
  query: Q;
  responses: { 200: R };
  paged: PageOption<K, Pos>;
  // NoInfer: the guard alone says what a position is; the handler's answer is checked against it.
  handler: (
    ctx: RequestContext<A, B, Q, P>,
    page: PageRequest<Pos>,
  ) => Page<ItemsOf<R, K>, NoInfer<Pos>> | Promise<Page<ItemsOf<R, K>, NoInfer<Pos>>>;
}

/** The erased form the router stores. */
export type AnyRoute = RouteSpec<AuthMode, TSchema | undefined, TSchema | undefined, TSchema | undefined>;

type AnyPagedRoute = PagedRouteSpec<
  AuthMode,
  TSchema | undefined,
  PageQuery,
  TSchema | undefined,
  PageList,
  string,
  readonly PositionValue[]
>;

export function defineRoute<
  A extends AuthMode,
  B extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  P extends TSchema | undefined = undefined,
>(spec: RouteSpec<A, B, Q, P>): AnyRoute;
export function defineRoute<
  A extends AuthMode,
  Q extends PageQuery,
  R extends PageList,
  K extends ListField<R>,
  Pos extends readonly PositionValue[],
  B extends TSchema | undefined = undefined,
  P extends TSchema | undefined = undefined,
>(spec: PagedRouteSpec<A, B, Q, P, R, K, Pos>): AnyRoute;
export function defineRoute(spec: AnyRoute | AnyPagedRoute): AnyRoute {
  return spec.paged === undefined ? spec : pagedRoute(spec);
}

/** A paged list as the router runs every route: one handler that builds the reply. */
function pagedRoute({ paged, handler, ...route }: AnyPagedRoute): AnyRoute {
  const { items, defaultLimit, isPosition } = paged;
  return {
    handler: (erased) => {
      // The router gives every route the same context; this one's query is a PageQuery, so it has paging.
      const ctx = erased as unknown as RequestContext<AuthMode, undefined, PageQuery, undefined> & { paging: Paging };
      const made = handler(ctx, { after: ctx.paging.after(isPosition), limit: ctx.query.limit ?? defaultLimit });
      const reply = (page: Awaited<typeof made>) => json(200, { [items]: page.items, next_cursor: ctx.paging.next(page.next) });
      // A page read where its records are (http/owned-views.ts) comes later; one read here, at once.
      return made instanceof Promise ? made.then(reply) : reply(made);
    },
    // Spread last: a leading spread then more properties is a shape V8 keeps alive, which the request path
    // avoids everywhere (test/style/allocation-shapes.test.ts), though this object is made once, at start.
    ...route,
  };
}

export const json = (status: number, body: unknown): Reply => ({ status, body });
