// Main thread. On the journal engine the shards' LMDB read model lags their decisions by up to the writer's
// interval (docs/engine.md, "The service on the journal engine"); a route that must show a caller its own writes
// (RouteSpec.readsOwnWrites) awaits every shard's read barrier first: one LMDB commit, paid only by those
// routes. A barrier that does not pass within READ_BARRIER_TIMEOUT_MS (LMDB cannot commit: a full disk) is
// a 503 with Retry-After rather than a request held open. On the lmdb engine every answer already followed
// its commit, and routes run as declared.
import { overloadedAfter } from '../lib/errors.js';
import type { AnyRoute } from './route.js';

export const READ_BARRIER_TIMEOUT_MS = 2_000;

export function withReadBarriers(routes: readonly AnyRoute[], readBarrier: () => Promise<void>): AnyRoute[] {
  return routes.map((route) =>
    route.readsOwnWrites === true ? { handler: afterBarrier(route.handler, readBarrier), ...withoutHandler(route) } : route,
  );
}

function withoutHandler({ handler: _handler, ...rest }: AnyRoute): Omit<AnyRoute, 'handler'> {
  return rest;
}

function afterBarrier(handler: AnyRoute['handler'], readBarrier: () => Promise<void>): AnyRoute['handler'] {
  return async (ctx) => {
    await overloadedAfter(readBarrier(), READ_BARRIER_TIMEOUT_MS);
    return handler(ctx);
  };
}
