// Main thread. One HTTP request while server.ts works on it: the uWS response it may still write to (the
// Exchange), and what the route's handler is given of it (the HandlerContext). Both are made once per request,
// so each is a class with fixed fields and anything costly (an AbortController) is made only on first use.
import type { HttpResponse } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { Principal } from '../contract/principal.js';
import type { CallerNetworks } from '../auth/nonce-spenders.js';
import { Paging, type RoutePaging } from '../contract/paging.js';

/** One in-flight request: the response may only be touched while it is neither aborted nor answered. */
export class Exchange {
  isAborted = false;
  isAnswered = false;
  /** The route's handler has been started: it, not an abort, ends the request's hold on the shedder. */
  isRunning = false;
  /** The rate-limit bucket the request was charged to; null: its IP's (read for the RateLimit-* headers). */
  rateKey: string | null = null;
  /** The whole body has arrived (or was refused as too large): it no longer counts as in progress. */
  isBodyRead = false;
  /** A body still arriving after the turn it began in holds this (unread-bodies.ts BodyCharge); null otherwise. */
  bodyCharge: { release(): void } | null = null;
  /** The caller's IP and network, read on the auth routes only (they are limited by them); null otherwise. */
  caller: CallerNetworks | null = null;
  /** The caller's address a cluster's gateway forwarded this request for (server.ts forwardedClientOf); null otherwise. */
  forwardedClient: string | null = null;
  /** A cluster's gateway sent this request on to the coordinator (server.ts forward): its answer is the coordinator's. */
  isForwarded = false;
  #isWatchingAbort = false;
  /** Gives back the load shedder's place, once; null when the request took none. */
  #releasePlace: (() => void) | null = null;
  // Made on first use of `signal`: an AbortController costs ~3 µs and only waiting handlers (wait_ms) read
  // it, so most requests never pay for one (measured, docs/performance.md).
  #controller: AbortController | null = null;
  constructor(
    readonly res: HttpResponse,
    readonly requestId: string,
    readonly startMs: number,
  ) {}

  get signal(): AbortSignal {
    if (this.#controller === null) {
      this.#controller = new AbortController();
      if (this.isAborted) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  /**
   * uWS requires an abort handler before its request callback returns unanswered (a body still to read, a
   * handler still running). A request answered inside that callback needs none, so it is attached only then.
   */
  watchAbort(): void {
    if (this.#isWatchingAbort) return;
    this.#isWatchingAbort = true;
    this.res.onAborted(() => {
      this.isAborted = true;
      this.#controller?.abort();
      this.bodyCharge?.release();
      // A place is taken only when the handler starts (server.ts run), and held until the handler ends
      // (send), since the work goes on without the client; this covers a request that took one and never ran.
      if (!this.isRunning) this.releasePlace();
    });
  }

  holdPlace(release: () => void): void {
    this.#releasePlace = release;
  }

  releasePlace(): void {
    const release = this.#releasePlace;
    this.#releasePlace = null;
    release?.();
  }
}

/**
 * What a handler is given (RequestContext). A class, not an object literal with a `signal` getter: V8 kept
 * alive what such a per-request getter reached (the exchange, and through its AbortController the handler's
 * promise chain) past every young-generation collection, until the next full one. Measured with `GET
 * /healthz` under load: 1.35 MB kept per scavenge and 3.5 ms scavenges with the literal, 0.15 MB and 0.6 ms
 * with this class (docs/performance.md, "Allocation shapes").
 */
export class HandlerContext {
  readonly requestId: string;
  readonly #exchange: Exchange;
  readonly #routePaging: RoutePaging | null;
  // Made on first use: only paged routes read it, so every other request pays one null field.
  #paging: Paging | null = null;

  constructor(
    exchange: Exchange,
    routePaging: RoutePaging | null,
    readonly log: Logger,
    readonly auth: Principal | null,
    readonly body: unknown,
    readonly query: unknown,
    readonly params: unknown,
  ) {
    this.requestId = exchange.requestId;
    this.#exchange = exchange;
    this.#routePaging = routePaging;
  }

  get signal(): AbortSignal {
    return this.#exchange.signal;
  }

  get caller(): CallerNetworks | null {
    return this.#exchange.caller;
  }

  get paging(): Paging {
    if (this.#paging === null) {
      // Only a route whose query has `limit` and `cursor` is given `paging` by its types (route.ts PagingOf);
      // reaching this on another is a cast around them, a bug of the route.
      if (this.#routePaging === null) throw new Error('this route does not page (no cursor in its query schema)');
      this.#paging = new Paging(this.#routePaging, this.auth, this.params, this.query);
    }
    return this.#paging;
  }

  get rateKey(): string | null {
    return this.#exchange.rateKey;
  }
}
