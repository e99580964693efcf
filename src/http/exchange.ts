// Main thread. One HTTP request while server.ts works on it: the uWS response it may still write to (the
// Exchange), and what the route's handler is given of it (the HandlerContext). Both are made once per request,
// so each is a class with fixed fields and anything costly (an AbortController) is made only on first use.
import type { HttpResponse } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { Principal } from '../auth/principal.js';

/** One in-flight request: the response may only be touched while it is neither aborted nor answered. */
export class Exchange {
  isAborted = false;
  isAnswered = false;
  /** The route's handler has been started: it, not an abort, ends the request's hold on the shedder. */
  isRunning = false;
  /** The rate-limit bucket the request was charged to; null: its IP's (read for the RateLimit-* headers). */
  rateKey: string | null = null;
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
      // Gone while its body was being read: nothing runs for it, so its place is free now. Once its handler
      // runs, the place is held until the handler ends (send), since the work goes on without the client.
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

  constructor(
    exchange: Exchange,
    readonly log: Logger,
    readonly auth: Principal | null,
    readonly body: unknown,
    readonly query: unknown,
    readonly params: unknown,
  ) {
    this.requestId = exchange.requestId;
    this.#exchange = exchange;
  }

  get signal(): AbortSignal {
    return this.#exchange.signal;
  }

  get rateKey(): string | null {
    return this.#exchange.rateKey;
  }
}
