// Main thread. A route as server.ts runs it: its schemas compiled once at start (validate.ts) and reused by
// every request, and a place for its latency series, each looked up once per response status (server.ts
// observerOf) because prom-client hashes the label object on every labelled observe (docs/performance.md).
import type { HttpMetrics } from '../ops/metrics.js';
import { StrictObject } from '../contract/common.js';
import { ApiError } from '../lib/errors.js';
import type { AnyRoute } from './route.js';
import { compileValidator, type Validator } from './validate.js';
import { RoutePaging, type CursorCodec } from '../contract/paging.js';

/** A body sent to a route that declares none must be empty or `{}`. */
const EMPTY_BODY = compileValidator(StrictObject({}), { convertStrings: false });

export type Observer = ReturnType<HttpMetrics['requestSeconds']['series']>;

export interface CompiledRoute {
  route: AnyRoute;
  /** The latency series of this route by response status, looked up once each. */
  observers: Map<number, Observer>;
  body: Validator | null;
  query: Validator | null;
  params: Validator | null;
  /** Under /v1/auth/: also charged to the caller IP's auth bucket (HttpDeps.authRateLimiter). */
  isAuthRoute: boolean;
  /** Asks the load shedder before anything else (RouteSpec.isShedUnderLoad). */
  isShedUnderLoad: boolean;
  /** A paged route's cursors (its query has `cursor`), or null. */
  paging: RoutePaging | null;
}

/** Whether a route pages: its query schema has a `cursor` property (the OpenAPI document shows it the same way). */
export function isPagedRoute(route: AnyRoute): boolean {
  const properties = (route.query as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties !== undefined && 'cursor' in properties;
}

export function compileRoute(route: AnyRoute, cursors: CursorCodec): CompiledRoute {
  return {
    route,
    observers: new Map(),
    body: route.body === undefined ? null : compileValidator(route.body, { convertStrings: false }),
    query: route.query === undefined ? null : compileValidator(route.query, { convertStrings: true }),
    params: route.params === undefined ? null : compileValidator(route.params, { convertStrings: true }),
    isAuthRoute: route.path.startsWith('/v1/auth/'),
    isShedUnderLoad: route.isShedUnderLoad === true,
    paging: isPagedRoute(route) ? new RoutePaging(cursors, `${route.method} ${route.path}`) : null,
  };
}

/** Contract section 1: a body must be JSON (415 otherwise), parse (400 INVALID_JSON) and match the schema. */
export function decodeBody(compiled: CompiledRoute, contentType: string, bytes: Buffer): unknown {
  if (compiled.body === null && bytes.length === 0) return undefined;
  if (!/^application\/json\s*(;|$)/i.test(contentType)) throw new ApiError('UNSUPPORTED_MEDIA_TYPE');
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new ApiError('INVALID_JSON');
  }
  return (compiled.body ?? EMPTY_BODY).check(value);
}
