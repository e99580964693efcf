// Main thread. Serialized pages of a public list, kept while the data behind them has not changed, so a
// repeated page costs a map lookup instead of reading and serializing its records again (GET /v1/contests
// limit=100 over 1,000 contests: 0.24 ms of main thread per request for the records and JSON.stringify,
// measured in process, node 20; docs/performance.md "Public lists").
//
// Staleness: the owner of the data gives a version that changes whenever anything a page shows may have
// changed, before whoever caused the change is answered; a page is served only under the version it was
// made at, and the whole cache is dropped when the version moves.
//
// Bound: MAX_CACHED_PAGES pages (at most ~60 KB each at 100 summaries: ~4 MB); past it the oldest page is
// dropped. A caller varying its query only makes pages miss, never grows the cache.

/** Pages held at once, over every query (filter, limit, cursor). */
export const MAX_CACHED_PAGES = 64;

export class PageCache {
  readonly #pages = new Map<string, string>();
  #version = -1;

  /** The page serialized under `key` at `version`, or null. */
  get(version: number, key: string): string | null {
    if (version !== this.#version) return null;
    return this.#pages.get(key) ?? null;
  }

  set(version: number, key: string, body: string): void {
    if (version !== this.#version) {
      this.#pages.clear();
      this.#version = version;
    }
    if (this.#pages.size >= MAX_CACHED_PAGES && !this.#pages.has(key)) this.#pages.delete(this.#pages.keys().next().value!);
    this.#pages.set(key, body);
  }

  get size(): number {
    return this.#pages.size;
  }
}
