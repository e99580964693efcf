// Main thread. The HTTP front end on uWebSockets.js: one catch-all handler that routes, authorizes, reads the
// body (64 KiB limit, abort-safe), validates with the route's compiled schemas, runs the handler and writes
// the reply. Every failure leaves as the contract's error body; an unexpected one as 500 INTERNAL with the
// request id, which is also in the log line carrying the stack. A request's own state and what its handler
// sees of it are in exchange.ts; a route's schemas, compiled once at start, in compiled-route.ts.
import type { Clock } from '../lib/clock.js';
import { timingSafeEqual } from 'node:crypto';
import uWS, { type HttpRequest, type HttpResponse, type TemplatedApp } from 'uWebSockets.js';
import type { Logger } from 'pino';
import { ApiError, errors, isApiError, overloaded, rateLimited } from '../lib/errors.js';
import type { Principal } from '../contract/principal.js';
import { anonymousKey, type RateLimiter } from '../lib/rate-limit.js';
import type { HttpMetrics } from '../ops/metrics.js';
import { authorize } from './bearer.js';
import type { TokenResolver } from '../contract/principal.js';
import { readBody } from './body.js';
import { framingError } from './framing.js';
import { parseQuery } from './query.js';
import type { AnyRoute, Reply } from './route.js';
import { Router, type Method } from './router.js';
import { compileRoute, decodeBody, type CompiledRoute, type Observer } from './compiled-route.js';
import { Exchange, HandlerContext } from './exchange.js';
import { statusLine } from './status-text.js';
import { callerNetwork, callerWideNetwork } from '../lib/caller-network.js';
import type { LoadShedder } from './load-shedder.js';
import { UnreadBodies, type UnreadBodiesOptions } from './unread-bodies.js';
import type { CursorCodec } from '../contract/paging.js';
import {
  FORWARDED_CLIENT_HEADER,
  FORWARDED_KEY_HEADER,
  MAX_FORWARDED_BODY_BYTES,
  UNFORWARDED_HEADERS,
  type ForwardedReply,
  type Forwarder,
} from './forwarding.js';

/** Contract section 1: bodies over 64 KiB are refused with 413. */
export const MAX_BODY_BYTES = 64 * 1024;
const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface HttpDeps {
  routes: readonly AnyRoute[];
  tokens: TokenResolver;
  rateLimiter: RateLimiter;
  /**
   * The auth routes' own, tighter, per-IP limit (PARLAYD_AUTH_RATE_LIMIT_PER_S), charged on top of
   * `rateLimiter`: they need no token and each login costs a recovery and durable writes.
   */
  authRateLimiter: RateLimiter;
  /** The same per IPv4 /24 or IPv6 /48 (PARLAYD_AUTH_RATE_LIMIT_PER_NETWORK_PER_S), charged on top. */
  authNetworkRateLimiter: RateLimiter;
  log: Logger;
  metrics: HttpMetrics;
  /** True once the service has begun to stop (app.ts close): no request starts any more. */
  isStopping(): boolean;
  /** Front-door shedding of the routes that start work (PARLAYD_MAX_IN_FLIGHT_CREATES, ..._EVENT_LOOP_DELAY_MS). */
  shedder: LoadShedder;
  /** Bounds on bodies still arriving: bytes per IP and network, unread creates, a create's body deadline. */
  unreadBodies: UnreadBodiesOptions;
  /** The time the rate limits are charged at: the service's one clock, as the maker socket's upgrades are. */
  clock: Clock;
  /** Paged routes' cursors, under the data directory's cursor key (contract/paging.ts). */
  cursors: CursorCodec;
  /**
   * A cluster's gateway: what no route here matches goes to the coordinator (cluster/coordinator-link.ts),
   * and its answer back as it came. Absent: 404 or 405 here.
   */
  forward?: Forwarder;
  /**
   * A cluster's coordinator: a request that carries this key (FORWARDED_KEY_HEADER) was forwarded by its own
   * door from a gateway, and is charged to the caller it names (FORWARDED_CLIENT_HEADER), not to loopback.
   */
  forwardedKey?: string;
}

export function createHttpApp(deps: HttpDeps): TemplatedApp {
  const router = new Router<CompiledRoute>();
  for (const route of deps.routes) router.add(route.method, route.path, compileRoute(route, deps.cursors));
  const app = uWS.App();
  let requestSeq = 0;
  const requestIdPrefix = `${Date.now().toString(36)}-${process.pid.toString(36)}-`;
  const unmatchedObserver = (method: string, status: number) =>
    deps.metrics.requestSeconds.series({ route: 'unmatched', method, status: String(status) });

  // True while uWS runs our request callback: uWS has corked the socket for it, so a reply written then
  // needs no cork of its own (one native call and a closure fewer on the GET path).
  let isInRequestCallback = false;

  // A body still arriving at the end of the turn it began in is charged to its caller (unread-bodies.ts):
  // past a bound it is 429 and its connection closed; a create's body past its deadline is closed unanswered.
  const unreadBodies = new UnreadBodies<CompiledRoute>(deps.unreadBodies, {
    refuse: (exchange, compiled) => {
      deps.metrics.slowBodiesTotal.inc({ outcome: 'refused' });
      send(exchange, errorReply(rateLimited(1)), compiled, true);
    },
    expire: (exchange) => {
      exchange.bodyCharge?.release();
      if (exchange.isAborted || exchange.isAnswered) return;
      deps.metrics.slowBodiesTotal.inc({ outcome: 'expired' });
      deps.log.debug({ requestId: exchange.requestId }, 'create body not in by its deadline: connection closed');
      exchange.isAnswered = true;
      exchange.res.close();
    },
  });

  app.any('/*', (res, req) => {
    isInRequestCallback = true;
    try {
      handleRequest(res, req);
    } finally {
      isInRequestCallback = false;
    }
  });

  function handleRequest(res: HttpResponse, req: HttpRequest): void {
    const exchange = new Exchange(res, requestIdPrefix + (++requestSeq).toString(36), performance.now());
    // The uWS request object is only valid during this synchronous call: read everything now.
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const path = req.getUrl();
    // Before routing: a smuggled request hides behind any path, a 404 one included.
    const framingFault = framingError(req);
    if (framingFault !== null) return refuseFraming(exchange, framingFault, method);
    if (deps.isStopping()) {
      // Closing the listen socket stops new connections only: a request on one kept alive from before would
      // reach a store that is closing (a 500, or a write the client is told failed). It gets 503 with
      // Retry-After, and its connection is closed.
      return send(exchange, errorReply(overloaded()), unmatchedObserver(method, 503), true);
    }
    if (deps.forwardedKey !== undefined) exchange.forwardedClient = forwardedClientOf(req, deps.forwardedKey);
    const match = router.match(method, path);
    if (match.kind !== 'found' && deps.forward !== undefined) return forward(exchange, req, method, path, deps.forward);
    if (match.kind !== 'found') {
      // RFC 9110 section 15.5.6: a 405 lists the methods the path does allow.
      const reply = errorReply(new ApiError(match.kind === 'not-found' ? 'NOT_FOUND' : 'METHOD_NOT_ALLOWED'));
      if (match.kind === 'method-not-allowed') reply.headers = { Allow: match.allowed.join(', ') };
      return send(exchange, reply, unmatchedObserver(method, reply.status));
    }
    const compiled = match.route;
    // While the thread is behind, before anything is done for it (no token lookup, no body read, no
    // recovery): a refusal costs a few µs and leaves nothing behind (contract section 2, OVERLOADED). The
    // in-flight place is taken later, when the handler starts (run).
    if (compiled.isShedUnderLoad) {
      const shedReason = deps.shedder.refusalAtDoor();
      if (shedReason !== null) {
        deps.metrics.shedTotal.inc({ reason: shedReason });
        return send(exchange, errorReply(overloaded()), compiled);
      }
    }
    const rawQuery = req.getQuery() ?? '';
    const authorization = req.getHeader('authorization');
    const fetching = deps.tokens.fetch === undefined ? null : fetchCopy(compiled, authorization, exchange);
    if (fetching !== null && !METHODS_WITH_BODY.has(method)) {
      // Nothing of the request is read from uWS after this turn but its response: it goes on once fetched.
      exchange.watchAbort();
      fetching.then(
        () => void (exchange.isAborted || admit(exchange, compiled, match.params, method, rawQuery, authorization, req, null)),
        (err: unknown) => send(exchange, failureReply(err, exchange.requestId, deps.log), compiled),
      );
      return;
    }
    admit(exchange, compiled, match.params, method, rawQuery, authorization, req, fetching);
  }

  /**
   * Authorizes, charges, validates and runs a matched request, reading its body first if it has one. `req`
   * is read only for a body's headers, so only while uWS's callback runs (a request without a body may come
   * here a turn later, its bearer's copy fetched). `fetching`: a body route's bearer still being fetched, so
   * it is authorized and charged once the body is in.
   */
  function admit(
    exchange: Exchange,
    compiled: CompiledRoute,
    rawParams: Record<string, string>,
    method: string,
    rawQuery: string,
    authorization: string,
    req: HttpRequest,
    fetching: Promise<void> | null,
  ): void {
    const { res } = exchange;
    const nowMs = deps.rateLimiter.isEnabled ? deps.clock.nowMs() : 0;
    try {
      // A body route whose bearer is being fetched is authorized, and charged, once its body is in.
      const auth = fetching === null ? authorizeCharged(compiled, authorization, exchange, nowMs) : null;
      if (deps.rateLimiter.isEnabled && auth?.kind !== 'admin' && fetching === null) {
        takeOrRefuse((exchange.rateKey = rateLimitKey(auth, exchange)), nowMs);
      }
      if (compiled.isAuthRoute) chargeAuthRoute(exchange, nowMs === 0 ? deps.clock.nowMs() : nowMs);
      const params = compiled.params?.check(rawParams) ?? {};
      const query = compiled.query?.check(parseQuery(rawQuery)) ?? {};
      if (!METHODS_WITH_BODY.has(method)) return run(exchange, compiled, auth, query, params, undefined);
      const maxBodyBytes = compiled.route.maxBodyBytes ?? MAX_BODY_BYTES;
      const contentLength = req.getHeader('content-length');
      const declaredBytes = Number(contentLength);
      if (declaredBytes > maxBodyBytes) {
        return send(exchange, errorReply(new ApiError('PAYLOAD_TOO_LARGE')), compiled, true);
      }
      const contentType = req.getHeader('content-type');
      exchange.watchAbort();
      const shedCallerKey = compiled.isShedUnderLoad ? (exchange.rateKey ?? rateLimitKey(auth, exchange)) : null;
      // No Content-Length (chunked: framing.ts accepts no other coding), or one that is not a plain count
      // (uWS reads its own way): the body may grow to the limit.
      const isCount = contentLength !== '' && Number.isSafeInteger(declaredBytes) && declaredBytes >= 0;
      unreadBodies.begin(exchange, compiled, isCount ? declaredBytes : maxBodyBytes, shedCallerKey);
      readBody(res, maxBodyBytes, (outcome) => {
        exchange.isBodyRead = true;
        exchange.bodyCharge?.release();
        if (exchange.isAborted || exchange.isAnswered) return;
        if (outcome.kind === 'too-large') return send(exchange, errorReply(new ApiError('PAYLOAD_TOO_LARGE')), compiled, true);
        const runWithBody = () => {
          if (exchange.isAborted || exchange.isAnswered) return;
          try {
            // The body may have trickled in for seconds, and the token may have been revoked (logout, maker
            // removed) or have expired meanwhile: it is resolved again, so a dead token never acts. One lookup
            // in the in-memory session map; a token that no longer resolves is 401 as on any other request.
            const current =
              fetching !== null
                ? authorizeFetched(compiled, authorization, exchange)
                : auth === null
                  ? null
                  : authorize(compiled.route.auth, authorization, deps.tokens);
            run(exchange, compiled, current, query, params, decodeBody(compiled, contentType, outcome.bytes));
          } catch (err) {
            send(exchange, failureReply(err, exchange.requestId, deps.log), compiled);
          }
        };
        if (fetching === null) return runWithBody();
        fetching.then(runWithBody, (err: unknown) => send(exchange, failureReply(err, exchange.requestId, deps.log), compiled));
      });
    } catch (err) {
      send(exchange, failureReply(err, exchange.requestId, deps.log), compiled);
    }
  }

  /**
   * Answers a request whose framing is ambiguous (400, framing.ts) and closes its connection, one turn later
   * rather than in this callback: uWS 20 goes on parsing the bytes it has already read after a response
   * that closes the connection, so a request smuggled in the body would still run. While a response is
   * pending uWS refuses a further request on the socket by closing it (it allows no asynchronous
   * pipelining). So a smuggled request in the same read closes the socket unanswered and unrun; otherwise
   * the 400 goes out next turn and the close stops uWS reading anything after it. (Measured with raw
   * sockets: test/http/framing.test.ts.)
   */
  function refuseFraming(exchange: Exchange, error: ApiError, method: string): void {
    exchange.watchAbort();
    setImmediate(() => send(exchange, errorReply(error), unmatchedObserver(method, error.status), true));
  }

  /**
   * The route's principal. A request whose bearer is refused (401, or 403 for a token of the wrong kind) is
   * charged to its IP's bucket, as an anonymous one is (contract section 2): otherwise tokens could be
   * guessed at full speed (the admin token may be as short as 16 characters). Once that bucket is empty the
   * IP is locked out: any bearer it sends is 429 before it is looked at, so a right guess cannot be told
   * from a wrong one until the bucket refills. While no IP is locked out this costs one getter call.
   */
  function authorizeCharged(compiled: CompiledRoute, authorization: string, exchange: Exchange, nowMs: number): Principal | null {
    const limiter = deps.rateLimiter;
    if (authorization !== '' && compiled.route.auth !== 'none' && limiter.hasLockouts(nowMs)) {
      const retryAfterS = limiter.lockoutOf(rateLimitKey(null, exchange), nowMs);
      if (retryAfterS > 0) throw rateLimited(retryAfterS);
    }
    try {
      return authorize(compiled.route.auth, authorization, deps.tokens);
    } catch (err) {
      const retryAfterS = limiter.isEnabled ? limiter.takeRefused(rateLimitKey(null, exchange), nowMs) : 0;
      if (retryAfterS > 0) throw rateLimited(retryAfterS);
      throw err;
    }
  }

  /**
   * A cluster gateway's copy of the bearer's session, fetched from the coordinator (contract/principal.ts
   * TokenResolver.fetch); null when none is needed. Not for an IP locked out for bad bearers: its guesses are
   * refused here without a round trip each.
   */
  function fetchCopy(compiled: CompiledRoute, authorization: string, exchange: Exchange): Promise<void> | null {
    if (compiled.route.auth === 'none' || authorization === '') return null;
    const limiter = deps.rateLimiter;
    const nowMs = limiter.isEnabled ? deps.clock.nowMs() : 0;
    if (limiter.hasLockouts(nowMs) && limiter.lockoutOf(rateLimitKey(null, exchange), nowMs) > 0) return null;
    return deps.tokens.fetch!(authorization);
  }

  /** A body route's bearer, once its copy was fetched: authorized, and charged, only now that its body is in. */
  function authorizeFetched(compiled: CompiledRoute, authorization: string, exchange: Exchange): Principal | null {
    const nowMs = deps.rateLimiter.isEnabled ? deps.clock.nowMs() : 0;
    const auth = authorizeCharged(compiled, authorization, exchange, nowMs);
    if (deps.rateLimiter.isEnabled && auth?.kind !== 'admin') takeOrRefuse((exchange.rateKey = rateLimitKey(auth, exchange)), nowMs);
    return auth;
  }

  /**
   * A cluster gateway's request for the coordinator (HttpDeps.forward): its headers and body as they came,
   * and the coordinator's answer as it comes back. The coordinator charges its limits to the caller.
   */
  function forward(exchange: Exchange, req: HttpRequest, method: string, path: string, forwarder: Forwarder): void {
    const query = req.getQuery();
    const url = query === undefined || query === '' ? path : `${path}?${query}`;
    const headers: [string, string][] = [];
    req.forEach((name, value) => {
      if (!UNFORWARDED_HEADERS.has(name)) headers.push([name, value]);
    });
    const client = remoteAddressText(exchange);
    const observed = (reply: Reply) => deps.metrics.requestSeconds.series({ route: 'forwarded', method, status: String(reply.status) });
    const answer = (reply: Reply, closeConnection = false) => send(exchange, reply, observed(reply), closeConnection);
    exchange.isForwarded = true;
    exchange.watchAbort();
    const relay = (body: Uint8Array | null) =>
      forwarder({ method, url, headers, body, client }).then(
        (reply) => answer(forwardedReply(reply)),
        (err: unknown) => answer(failureReply(err, exchange.requestId, deps.log)),
      );
    if (!METHODS_WITH_BODY.has(method)) return void relay(null);
    readBody(exchange.res, MAX_FORWARDED_BODY_BYTES, (outcome) => {
      if (exchange.isAborted || exchange.isAnswered) return;
      if (outcome.kind === 'too-large') return answer(errorReply(new ApiError('PAYLOAD_TOO_LARGE')), true);
      void relay(outcome.bytes);
    });
  }

  /**
   * The auth routes need no token and each login costs a recovery and a durable write: their own limits per
   * IP and per network, on top of the general one. The caller's networks are kept for the handler, which
   * charges the login nonce it spends to them (auth/nonce-spenders.ts).
   */
  function chargeAuthRoute(exchange: Exchange, nowMs: number): void {
    const address = remoteAddressText(exchange);
    const caller = { ip: callerNetwork(address), network: callerWideNetwork(address) };
    exchange.caller = caller;
    const ipRetryAfterS = deps.authRateLimiter.take(anonymousKey(caller.ip), nowMs);
    if (ipRetryAfterS > 0) throw rateLimited(ipRetryAfterS);
    const networkRetryAfterS = deps.authNetworkRateLimiter.take(`net:${caller.network}`, nowMs);
    if (networkRetryAfterS > 0) throw rateLimited(networkRetryAfterS);
  }

  /** Spends one request from `key`'s bucket, or throws 429 RATE_LIMITED with Retry-After. */
  function takeOrRefuse(key: string, nowMs: number): void {
    const retryAfterS = deps.rateLimiter.take(key, nowMs);
    if (retryAfterS > 0) throw rateLimited(retryAfterS);
  }

  /**
   * Runs the route's handler. A handler that answers synchronously (a GET of a terminal RFQ) is written in
   * the same uWS callback, with no promise turn and no abort handler: a third of a GET's cost before this.
   */
  function run(exchange: Exchange, compiled: CompiledRoute, auth: Principal | null, query: unknown, params: unknown, body: unknown): void {
    if (compiled.isShedUnderLoad) {
      // Taken only now, with the bearer checked and the whole body in: a client cannot hold one by sending
      // slowly. Held until the handler ends (send), even if the client goes away meanwhile.
      const shedReason = deps.shedder.tryTakePlace();
      if (shedReason !== null) {
        deps.metrics.shedTotal.inc({ reason: shedReason });
        return send(exchange, errorReply(overloaded()), compiled);
      }
      exchange.holdPlace(deps.shedder.release);
    }
    const ctx = new HandlerContext(exchange, compiled.paging, deps.log, auth, body, query, params);
    exchange.isRunning = true;
    let outcome: Reply | Promise<Reply>;
    try {
      outcome = compiled.route.handler(ctx as never);
    } catch (err) {
      return send(exchange, failureReply(err, exchange.requestId, deps.log), compiled);
    }
    if (!(outcome instanceof Promise)) return send(exchange, outcome, compiled);
    exchange.watchAbort();
    outcome.then(
      (reply) => send(exchange, reply, compiled),
      (err: unknown) => send(exchange, failureReply(err, exchange.requestId, deps.log), compiled),
    );
  }

  function send(exchange: Exchange, reply: Reply, observe: CompiledRoute | Observer, closeConnection = false): void {
    // The request's work is over whether or not its client is still there to hear the answer.
    exchange.releasePlace();
    if (exchange.isAborted || exchange.isAnswered) return;
    exchange.isAnswered = true;
    const isJson = reply.contentType === undefined;
    const payload = isJson ? JSON.stringify(reply.body) : (reply.body as string | Uint8Array);
    const { res } = exchange;
    const write = () => {
      // uWS answers 200 OK when no status is written.
      if (reply.status !== 200) res.writeStatus(statusLine(reply.status));
      res.writeHeader('Content-Type', isJson ? 'application/json' : reply.contentType!);
      res.writeHeader('X-Request-Id', exchange.requestId);
      // A forwarded reply carries the coordinator's, which charged it.
      if (deps.rateLimiter.isEnabled && !exchange.isForwarded) writeRateLimitHeaders(exchange);
      if (reply.headers !== undefined) for (const name in reply.headers) res.writeHeader(name, reply.headers[name]!);
      res.end(payload, closeConnection);
    };
    if (isInRequestCallback) write();
    else res.cork(write);
    const observer = 'observers' in observe ? observerOf(observe, reply.status) : observe;
    observer.observe((performance.now() - exchange.startMs) / 1000);
    if (reply.status >= 400) deps.metrics.errorsTotal.inc({ code: (reply.body as { code?: string }).code ?? 'UNKNOWN' });
  }

  /**
   * Every response says where its caller's bucket stands (draft-ietf-httpapi-ratelimit-headers:
   * RateLimit-Limit = the bucket size, -Remaining = whole requests left, -Reset = seconds until it is full).
   * A caller not charged (the admin, an unmatched path) is shown its IP's bucket.
   */
  function writeRateLimitHeaders(exchange: Exchange): void {
    const { res } = exchange;
    const state = deps.rateLimiter.headerValues(exchange.rateKey ?? rateLimitKey(null, exchange), deps.clock.nowMs());
    res.writeHeader('RateLimit-Limit', String(state.limit));
    res.writeHeader('RateLimit-Remaining', String(state.remaining));
    res.writeHeader('RateLimit-Reset', String(state.resetS));
  }

  function observerOf(compiled: CompiledRoute, status: number): Observer {
    let observer = compiled.observers.get(status);
    if (observer === undefined) {
      observer = deps.metrics.requestSeconds.series({ route: compiled.route.path, method: compiled.route.method, status: String(status) });
      compiled.observers.set(status, observer);
    }
    return observer;
  }

  return app;
}

/** Sessions are limited per principal; anonymous callers per remote IP (an IPv6 caller per /64). */
function rateLimitKey(auth: Principal | null, exchange: Exchange): string {
  if (auth?.kind === 'user') return `user:${auth.userId}`;
  if (auth?.kind === 'maker') return `maker:${auth.address}`;
  return anonymousKey(callerNetwork(remoteAddressText(exchange)));
}

/** The caller's address: the one a gateway forwarded the request for, or the socket's peer. */
function remoteAddressText(exchange: Exchange): string {
  return exchange.forwardedClient ?? Buffer.from(exchange.res.getRemoteAddressAsText()).toString();
}

/** The caller a request names when it carries the door's key (the coordinator's own door sent it), else null. */
function forwardedClientOf(req: HttpRequest, key: string): string | null {
  const presented = Buffer.from(req.getHeader(FORWARDED_KEY_HEADER));
  const expected = Buffer.from(key);
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return null;
  const client = req.getHeader(FORWARDED_CLIENT_HEADER);
  return client === '' ? null : client;
}

/** The coordinator's answer to a forwarded request, as the reply this gateway writes. */
function forwardedReply(forwarded: ForwardedReply): Reply {
  const headers: Record<string, string> = {};
  let contentType = 'application/octet-stream';
  for (const [name, value] of forwarded.headers) {
    if (name === 'content-type') contentType = value;
    else if (!UNFORWARDED_HEADERS.has(name) && name !== 'x-request-id') headers[name] = value;
  }
  return { status: forwarded.status, body: forwarded.body, contentType, headers };
}

function errorReply(error: ApiError): Reply {
  return { status: error.status, body: error.toBody(), ...(error.headers === undefined ? {} : { headers: { ...error.headers } }) };
}

function failureReply(err: unknown, requestId: string, log: Logger): Reply {
  if (isApiError(err)) return errorReply(err);
  log.error({ err, requestId }, 'unhandled error in request');
  return errorReply(errors.internal(requestId));
}

export type { Method };
