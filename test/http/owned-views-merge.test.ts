// http/owned-views.ts mergePartPages: a list whose items are spread over parts (a cluster's nodes: a maker's
// fills, its takers' P&L), each part paged on its own after the same cursor, merged page by page, lists every
// item exactly once in list order, whatever the split, the page size and where each part's scan bound stops it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { mergePartPages, type PartPage } from '../../src/http/owned-views.js';

const before = (a: string, b: string) => a < b;
const cursorOf = (item: string) => item;

/**
 * One part's page as a node's view makes it: its items after `after`, at most `limit`, with `next` its last
 * item listed when a full page has more after it; a scan bound of `scanMax` items visited (some of which the
 * filter drops: `isListed`) may stop it early, with `next` its last item scanned.
 */
function partPage(
  items: readonly string[],
  after: string | null,
  limit: number,
  scanMax: number,
  isListed: (item: string) => boolean,
): PartPage<string> {
  const listed: string[] = [];
  let lastScanned: string | null = null;
  let scanned = 0;
  for (const item of items.filter((candidate) => after === null || before(after, candidate))) {
    if (scanned === scanMax) return { items: listed, next: listed.length === limit ? listed.at(-1)! : lastScanned };
    scanned++;
    lastScanned = item;
    if (!isListed(item)) continue;
    if (listed.length === limit) return { items: listed, next: listed.at(-1)! };
    listed.push(item);
  }
  return { items: listed, next: null };
}

test('every item of every part is listed once, in order, by merged pages', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { maxLength: 60 }),
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 1, max: 7 }),
      fc.integer({ min: 1, max: 9 }),
      fc.integer({ min: 0, max: 1 << 30 }),
      (all, partCount, limit, scanMax, seed) => {
        const sorted = [...all].sort();
        // Items to parts, and which the filter lists, both by a hash of the item and the seed.
        const hash = (item: string, salt: number) => [...item].reduce((h, c) => (h * 31 + c.charCodeAt(0) + salt) >>> 0, seed);
        const parts = Array.from({ length: partCount }, (_, p) => sorted.filter((item) => hash(item, 0) % partCount === p));
        const isListed = (item: string) => hash(item, 7) % 4 !== 0;
        const listed: string[] = [];
        let after: string | null = null;
        for (let pages = 0; pages <= sorted.length + 2; pages++) {
          const page = mergePartPages(
            parts.map((items) => partPage(items, after, limit, scanMax, isListed)),
            limit,
            cursorOf,
            before,
          );
          assert.ok(page.items.length <= limit);
          listed.push(...page.items);
          if (page.next === null) break;
          assert.ok(after === null || before(after, page.next), 'each page moves on');
          after = page.next;
        }
        assert.deepEqual(listed, sorted.filter(isListed));
      },
    ),
    { numRuns: 500 },
  );
});
