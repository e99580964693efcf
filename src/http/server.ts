// Main thread. The HTTP front end on uWebSockets.js: one catch-all handler that routes, authorizes, reads the
// body (64 KiB limit, abort-safe), validates with the route's compiled schemas, runs the handler and writes
// the reply. Every failure leaves as the contract's error body; an unexpected one as 500 INTERNAL with the
// request id, which is also in the log line carrying the stack.
import uWS, { type HttpResponse, type TemplatedApp } from 'uWebSockets.js';
import type { Logger } from 'pino';
import { ApiError, isApiError, rateLimited } from '../errors.js';
import type { Principal } from '../auth/principal.js';
import type { RateLimiter } from './rate-limit.js';
import type { HttpMetrics } from '../ops/metrics.js';
import { authorize, type TokenResolver } from './bearer.js';
import { readBody } from './body.js';
import { parseQuery } from './query.js';
import type { AnyRoute, Reply } from './route.js';
import { Router, type Method } from './router.js';
import { statusLine } from './status-text.js';
import { compileValidator, type Validator } from './validate.js';
import { StrictObject } from '../schemas/common.js';

/** Contract section 1: bodies over 64 KiB are refused with 413. */
export const MAX_BODY_BYTES = 64 * 1024;
const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const EMPTY_BODY = compileValidator(StrictObject({}), { convertStrings: false });
const MAX_CACHED_METRIC_CHILDREN = 1024;

interface CompiledRoute {
  route: AnyRoute;
  body: Validator | null;
  query: Validator | null;
  params: Validator | null;
}

export interface HttpDeps {
  routes: readonly AnyRoute[];
  tokens: TokenResolver;
  rateLimiter: RateLimiter;
  log: Logger;
  metrics: HttpMetrics;
}

/** One in-flight request: the response may only be touched while it is neither aborted nor answered. */
class Exchange {
  isAborted = false;
  isAnswered = false;
  // Made on first use of `signal`: an AbortController costs ~3 µs and only waiting handlers (wait_ms) read
  // it, so most requests never pay for one (measured, docs/performance.md).
  #controller: AbortController | null = null;
  constructor(
    readonly res: HttpResponse,
    readonly requestId: string,
    readonly startNs: bigint,
  ) {}

  get signal(): AbortSignal {
    if (this.#controller === null) {
      this.#controller = new AbortController();
      if (this.isAborted) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  abort(): void {
    this.isAborted = true;
    this.#controller?.abort();
  }
}

export function createHttpApp(deps: HttpDeps): TemplatedApp {
  const router = new Router<CompiledRoute>();
  for (const route of deps.routes) router.add(route.method, route.path, compileRoute(route));
  const app = uWS.App();
  let requestSeq = 0;
  const requestIdPrefix = `${Date.now().toString(36)}-${process.pid.toString(36)}`;

  // prom-client hashes the label object on every observe; the labelled child is looked up once per
  // (route, method, status) instead. Bounded: past the bound (methods are client text on unmatched paths)
  // children are not cached, and the metric itself behaves as before.
  const requestSecondsChildren = new Map<string, ReturnType<HttpMetrics['requestSeconds']['labels']>>();
  const requestSecondsOf = (route: string, method: string, status: number) => {
    const key = `${route} ${method} ${status}`;
    let child = requestSecondsChildren.get(key);
    if (child === undefined) {
      child = deps.metrics.requestSeconds.labels({ route, method, status: String(status) });
      if (requestSecondsChildren.size < MAX_CACHED_METRIC_CHILDREN) requestSecondsChildren.set(key, child);
    }
    return child;
  };

  app.any('/*', (res, req) => {
    const exchange = new Exchange(res, `${requestIdPrefix}-${(++requestSeq).toString(36)}`, process.hrtime.bigint());
    res.onAborted(() => exchange.abort());
    // The uWS request object is only valid during this synchronous call: read everything now.
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const path = req.getUrl();
    const rawQuery = req.getQuery() ?? '';
    const authHeader = req.getHeader('authorization');
    const contentType = req.getHeader('content-type');
    const contentLength = req.getHeader('content-length');

    const match = router.match(method, path);
    if (match.kind !== 'found') {
      // RFC 9110 section 15.5.6: a 405 lists the methods the path does allow.
      const reply =
        match.kind === 'not-found'
          ? errorReply(new ApiError('NOT_FOUND'))
          : { ...errorReply(new ApiError('METHOD_NOT_ALLOWED')), headers: { Allow: match.allowed.join(', ') } };
      return send(exchange, reply, method, 'unmatched');
    }
    const compiled = match.route;
    const routeLabel = compiled.route.path;
    try {
      const auth = authorize(compiled.route.auth, authHeader, deps.tokens);
      if (deps.rateLimiter.isEnabled && auth?.kind !== 'admin') {
        const retryAfterS = deps.rateLimiter.take(rateLimitKey(auth, res), Date.now());
        if (retryAfterS > 0) throw rateLimited(retryAfterS);
      }
      const params = compiled.params?.check(match.params) ?? {};
      const query = compiled.query?.check(parseQuery(rawQuery)) ?? {};
      const run = (body: unknown) => {
        const ctx = {
          requestId: exchange.requestId,
          log: deps.log,
          auth,
          body,
          query,
          params,
          get signal() {
            return exchange.signal;
          },
        };
        Promise.resolve()
          .then(() => compiled.route.handler(ctx as never))
          .then(
            (reply) => send(exchange, reply, method, routeLabel),
            (err: unknown) => send(exchange, failureReply(err, exchange.requestId, deps.log), method, routeLabel),
          );
      };
      if (!METHODS_WITH_BODY.has(method)) return run(undefined);
      const maxBodyBytes = compiled.route.maxBodyBytes ?? MAX_BODY_BYTES;
      if (Number(contentLength) > maxBodyBytes) {
        return send(exchange, errorReply(new ApiError('PAYLOAD_TOO_LARGE')), method, routeLabel, true);
      }
      readBody(res, maxBodyBytes, (outcome) => {
        if (exchange.isAborted) return;
        if (outcome.kind === 'too-large') {
          return send(exchange, errorReply(new ApiError('PAYLOAD_TOO_LARGE')), method, routeLabel, true);
        }
        try {
          run(decodeBody(compiled, contentType, outcome.bytes));
        } catch (err) {
          send(exchange, failureReply(err, exchange.requestId, deps.log), method, routeLabel);
        }
      });
    } catch (err) {
      send(exchange, failureReply(err, exchange.requestId, deps.log), method, routeLabel);
    }
  });

  function send(exchange: Exchange, reply: Reply, method: string, routeLabel: string, closeConnection = false): void {
    if (exchange.isAborted || exchange.isAnswered) return;
    exchange.isAnswered = true;
    const isJson = reply.contentType === undefined;
    const payload = isJson ? JSON.stringify(reply.body) : (reply.body as string | Uint8Array);
    exchange.res.cork(() => {
      exchange.res.writeStatus(statusLine(reply.status));
      exchange.res.writeHeader('Content-Type', isJson ? 'application/json' : reply.contentType!);
      exchange.res.writeHeader('X-Request-Id', exchange.requestId);
      if (reply.headers !== undefined) for (const [name, value] of Object.entries(reply.headers)) exchange.res.writeHeader(name, value);
      exchange.res.end(payload, closeConnection);
    });
    const seconds = Number(process.hrtime.bigint() - exchange.startNs) / 1e9;
    requestSecondsOf(routeLabel, method, reply.status).observe(seconds);
    if (reply.status >= 400) deps.metrics.errorsTotal.inc({ code: (reply.body as { code?: string }).code ?? 'UNKNOWN' });
  }

  return app;
}

/** Sessions are limited per principal; anonymous callers per remote IP. */
function rateLimitKey(auth: Principal | null, res: HttpResponse): string {
  if (auth?.kind === 'user') return `user:${auth.userId}`;
  if (auth?.kind === 'maker') return `maker:${auth.address}`;
  return `ip:${Buffer.from(res.getRemoteAddressAsText()).toString()}`;
}

function compileRoute(route: AnyRoute): CompiledRoute {
  return {
    route,
    body: route.body === undefined ? null : compileValidator(route.body, { convertStrings: false }),
    query: route.query === undefined ? null : compileValidator(route.query, { convertStrings: true }),
    params: route.params === undefined ? null : compileValidator(route.params, { convertStrings: true }),
  };
}

/** Contract section 1: a body must be JSON (415 otherwise), parse (400 INVALID_JSON) and match the schema. */
function decodeBody(compiled: CompiledRoute, contentType: string, bytes: Buffer): unknown {
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

function errorReply(error: ApiError): Reply {
  return { status: error.status, body: error.toBody(), ...(error.headers === undefined ? {} : { headers: { ...error.headers } }) };
}

function failureReply(err: unknown, requestId: string, log: Logger): Reply {
  if (isApiError(err)) return errorReply(err);
  log.error({ err, requestId }, 'unhandled error in request');
  return errorReply(new ApiError('INTERNAL', `internal error (request ${requestId})`));
}

export type { Method };
