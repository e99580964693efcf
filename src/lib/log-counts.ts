// Main thread. Counts of a kind of event, logged as one info line per interval instead of a line per event.
// For events anyone can cause at will (refused maker logins, sockets closed before auth): a line each would
// let a caller fill the log, and hide everything else in it, at the rate it can open sockets. Each event is
// still logged at debug level by its caller, for an operator who turns that on.
//
// Bound: one counter per key; keys come from fixed sets (close reasons, refusal kinds), never from input.
import type { Logger } from 'pino';

export class LogCounts {
  readonly #counts = new Map<string, number>();
  #timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly log: Logger,
    /** The message of the summary line. */
    private readonly message: string,
    private readonly intervalMs: number,
  ) {}

  /** Counts one event of `key`; the first after a quiet interval starts the timer of the next summary. */
  count(key: string): void {
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
    if (this.#timer === null) {
      this.#timer = setTimeout(() => this.flush(), this.intervalMs);
      this.#timer.unref();
    }
  }

  /** Logs the counts since the last summary, if any, as one line: `{counts: {key: n}, intervalMs}`. */
  flush(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#counts.size === 0) return;
    const counts = Object.fromEntries(this.#counts);
    this.#counts.clear();
    this.log.info({ counts, intervalMs: this.intervalMs }, this.message);
  }
}
