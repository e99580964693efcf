// The folders of src/ are layers (docs/architecture.md, "Folder layout", lists them from the bottom up): a
// file may import its own folder and the folders listed above it, never one below, with no exceptions. This
// reads the doc's table, so the doc and the code cannot drift apart, and checks every import of src/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { importEdges } from '../../scripts/import-cycles.js';

const ROOT = new URL('../../..', import.meta.url).pathname;

/** The only files at the top of src/: the entry points, above every layer. */
const ENTRY_FILES = ['index.ts', 'main.ts'];

/** The doc's layers, bottom first. */
function documentedLayers(): string[] {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Folder layout'), doc.indexOf('## Where state lives'));
  return [...section.matchAll(/^\| `([a-z]+)\/` \|/gm)].map((m) => m[1]!);
}

/** A file's place: its layer's index, or the entry points' (above all). */
function rankOf(file: string, layers: readonly string[]): number {
  const parts = file.split('/');
  if (parts.length === 2) return layers.length;
  const rank = layers.indexOf(parts[1]!);
  assert.ok(rank >= 0, `${file}: its folder is not a layer of docs/architecture.md`);
  return rank;
}

test('every folder of src/ is one layer of the doc, listed once, and only the entry points sit beside them', () => {
  const layers = documentedLayers();
  assert.equal(new Set(layers).size, layers.length, `a layer listed twice: ${layers.join(', ')}`);
  const entries = readdirSync(join(ROOT, 'src'));
  const folders = entries.filter((name) => statSync(join(ROOT, 'src', name)).isDirectory());
  assert.deepEqual([...layers].sort(), folders.sort());
  assert.deepEqual(entries.filter((name) => !folders.includes(name)).sort(), ENTRY_FILES);
});

test('every import of src/ points at its own folder or a layer below it', () => {
  const layers = documentedLayers();
  const upward = importEdges(ROOT)
    .filter(({ from, to }) => from.split('/')[1] !== to.split('/')[1] && rankOf(to, layers) >= rankOf(from, layers))
    .map(({ from, to }) => `${from} -> ${to}`);
  assert.deepEqual(upward, []);
});

test('the check sees an upward import (a layer test that cannot fail proves nothing)', () => {
  const layers = ['lib', 'store'];
  assert.ok(rankOf('src/store/db.ts', layers) >= rankOf('src/lib/clock.ts', layers));
  assert.ok(rankOf('src/lib/clock.ts', layers) < rankOf('src/store/db.ts', layers));
  assert.equal(rankOf('src/main.ts', layers), 2);
  assert.throws(() => rankOf('src/nowhere/x.ts', layers), /not a layer/);
});
