// Main thread. The service is assembled from areas (app.ts): each is built from what the areas registered
// before it hold, and may start work (threads, timers, a listening socket) and stop it. They start in the
// order they were registered, each once the one before it has started, and stop in reverse, each once the
// one after it has stopped: nothing is stopped while an area that calls it still runs.
//
// When a build throws or a start fails, the assembler (app.ts createService) stops every area registered so
// far before the error reaches its caller, so a failed start leaves no thread or timer running. An area's
// stop therefore copes with a start that never ran or stopped half way.
//
// Each area also gives the HTTP routes of its parts; the http area serves them all (routes()).
import type { Logger } from 'pino';
import type { AnyRoute } from '../http/route.js';

export interface Area {
  /** What the log calls it when its stop fails. */
  readonly name: string;
  /**
   * The routes of its parts, or a function that builds them when the http area asks (routes()): a function
   * lets them use parts built after this area was registered, such as the services bag.
   */
  readonly routes?: readonly AnyRoute[] | (() => readonly AnyRoute[]);
  start?(): Promise<void> | void;
  stop?(): Promise<void> | void;
}

export class Areas {
  readonly #areas: Area[] = [];
  #stopping: Promise<void> | null = null;

  constructor(private readonly log: Logger) {}

  /** Registers `area` after those already registered; returns it, so a build can go on using its parts. */
  add<A extends Area>(area: A): A {
    if (this.#stopping !== null) throw new Error(`area ${area.name} registered after the stop began`); // a wiring bug
    this.#areas.push(area);
    return area;
  }

  /**
   * Every area's routes, in the order the areas were registered. Builds those given as a function on each
   * call: the http area calls it once, after the last area with routes is registered.
   */
  routes(): AnyRoute[] {
    return this.#areas.flatMap((area) => (typeof area.routes === 'function' ? area.routes() : (area.routes ?? [])));
  }

  /** Starts every area in order, each once the one before it has started; rejects at the first failure. */
  async start(): Promise<void> {
    for (const area of this.#areas) await area.start?.();
  }

  get isStopping(): boolean {
    return this.#stopping !== null;
  }

  /**
   * Stops every registered area, in reverse, once (later calls get the same promise). A failed stop does not
   * keep the areas below it running: they stop too, and the first failure is the promise's rejection.
   */
  stop(): Promise<void> {
    return (this.#stopping ??= this.#stopAll());
  }

  async #stopAll(): Promise<void> {
    let firstFailure: { err: unknown } | null = null;
    for (const area of [...this.#areas].reverse()) {
      try {
        await area.stop?.();
      } catch (err) {
        this.log.error({ err, area: area.name }, 'an area failed to stop; stopping the ones below it');
        firstFailure ??= { err };
      }
    }
    if (firstFailure !== null) throw firstFailure.err;
  }
}
