// Progress of a long command (bench:load, chaos, fuzz, the demo's start-up) on a terminal (issue 23 item 3):
// one line on stderr, redrawn in place, at most ten times a second. Quiet where nobody watches a terminal:
// stderr not a TTY (a pipe, a file, CI logs) or CI set; the commands' own stdout lines are unchanged.
// stderr, so a command's stdout stays a clean record (JSON lines, reports) whatever is shown.

export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

/** Redraws closer together than this are skipped: a terminal line, not a log. */
const MIN_REDRAW_MS = 100;
const BAR_CELLS = 24;

/** True where a person watches: stderr is a terminal and this is not CI (CI=true, or 1, as CI systems set it). */
export function isProgressShown(stream: ProgressStream = process.stderr, env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = env['CI'];
  return stream.isTTY === true && (ci === undefined || ci === '' || ci === 'false' || ci === '0');
}

/** The line for `done` of `total` (null: a count with no end). Pure, for tests. */
export function progressLine(label: string, done: number, total: number | null, detail: string, columns = 100): string {
  let line: string;
  if (total === null || total <= 0) {
    line = `${label} ${done}`;
  } else {
    const ratio = Math.min(1, Math.max(0, done / total));
    const filled = Math.round(ratio * BAR_CELLS);
    line = `${label} [${'#'.repeat(filled)}${'.'.repeat(BAR_CELLS - filled)}] ${done}/${total} ${Math.round(ratio * 100)}%`;
  }
  if (detail !== '') line += ` ${detail}`;
  return line.length > columns - 1 ? line.slice(0, columns - 2) + '…' : line;
}

export class Progress {
  readonly #isShown: boolean;
  #done = 0;
  #detail = '';
  #lastDrawMs = 0;
  #isDrawn = false;

  constructor(
    private readonly label: string,
    private readonly total: number | null,
    private readonly stream: ProgressStream = process.stderr,
    isShown: boolean = isProgressShown(stream),
  ) {
    this.#isShown = isShown;
  }

  /** `done` steps of `total` so far, and what is happening now. */
  update(done: number, detail = ''): void {
    this.#done = done;
    this.#detail = detail;
    const nowMs = Date.now();
    if (nowMs - this.#lastDrawMs < MIN_REDRAW_MS && done !== this.total) return;
    this.#lastDrawMs = nowMs;
    this.#draw();
  }

  /** One more step done. */
  step(detail = ''): void {
    this.update(this.#done + 1, detail);
  }

  /** Clears the line, so what the command prints next starts on a clean one. */
  end(): void {
    if (this.#isShown && this.#isDrawn) this.stream.write('\r\x1b[2K');
    this.#isDrawn = false;
  }

  /** Writes a line of the command's own above the progress line, which is redrawn under it. */
  print(text: string, out: ProgressStream = process.stdout): void {
    this.end();
    out.write(text.endsWith('\n') ? text : text + '\n');
    this.#draw();
  }

  #draw(): void {
    if (!this.#isShown) return;
    this.stream.write('\r\x1b[2K' + progressLine(this.label, this.#done, this.total, this.#detail, this.stream.columns ?? 100));
    this.#isDrawn = true;
  }
}
