// scripts/import-cycles.ts on src/ (it must find no circle, file by file or folder by folder), and on graphs
// made here, so that a circle it should see is seen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { circles, folderEdges, importEdges } from '../../scripts/import-cycles.js';

const SCRIPT = new URL('../../scripts/import-cycles.js', import.meta.url).pathname;

test('src/ has no import circle: the script prints none and exits 0', () => {
  const run = spawnSync(process.execPath, [SCRIPT], { encoding: 'utf8' });
  assert.equal(run.stdout.trim(), 'no import circles in src/');
  assert.equal(run.status, 0);
});

test('a circle of files, a longer one through a type-only import, and a circle of folders are found', () => {
  assert.deepEqual(
    circles([
      { from: 'a', to: 'b' },
      { from: 'b', to: 'a' },
      { from: 'b', to: 'c' },
    ]),
    [['a', 'b']],
  );
  const ring = Array.from({ length: 5000 }, (_, i) => ({ from: `f${i}`, to: `f${(i + 1) % 5000}` }));
  assert.equal(circles(ring)[0]!.length, 5000, 'a deep chain is walked without overflowing the stack');
  assert.deepEqual(
    circles([
      { from: 'a', to: 'b' },
      { from: 'b', to: 'c' },
    ]),
    [],
  );

  const root = mkdtempSync(join(tmpdir(), 'parlayd-cycles-'));
  try {
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    write('src/low/a.ts', "import { b } from './b.js';\nexport const a = b;\n");
    write('src/low/b.ts', "import type { C } from '../high/c.js';\nexport const b = 1 as C;\n");
    write('src/high/c.ts', "export type C = number;\nexport { a } from '../low/a.js';\n");
    const edges = importEdges(root);
    assert.deepEqual(circles(edges), [['src/high/c.ts', 'src/low/a.ts', 'src/low/b.ts']]);
    assert.deepEqual(circles(folderEdges(edges)), [['high', 'low']]);
    const run = spawnSync(process.execPath, [SCRIPT, root], { encoding: 'utf8' });
    assert.equal(run.status, 1);
    assert.match(run.stdout, /^file circle of 3: src\/high\/c.ts, src\/low\/a.ts, src\/low\/b.ts$/m);
    assert.match(run.stdout, /^ {2}src\/low\/b.ts -> src\/high\/c.ts$/m);
    assert.match(run.stdout, /^folder circle of 2: high, low$/m);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
