// One format for every TypeScript file (Prettier, `.prettierrc.json`: 140 columns, single quotes), checked
// here so that a change that skips `npm run format` fails the suite instead of landing as noise in the next
// diff. Prettier does not wrap comments or string literals: those keep their own lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as prettier from 'prettier';
import { repoRoot } from '../helpers/paths.js';

const FORMATTED_DIRS = ['src', 'test', 'bench', 'scripts'];

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? tsFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

test('every TypeScript file is as `npm run format` writes it', async () => {
  const unformatted: string[] = [];
  for (const path of FORMATTED_DIRS.flatMap((dir) => tsFiles(join(repoRoot, dir)))) {
    const options = await prettier.resolveConfig(path);
    assert.ok(options !== null, `no Prettier config found for ${path}`);
    if (!(await prettier.check(readFileSync(path, 'utf8'), { ...options, filepath: path }))) unformatted.push(relative(repoRoot, path));
  }
  assert.deepEqual(unformatted, [], 'run `npm run format`');
});

test('the check sees an unformatted file', async () => {
  const options = await prettier.resolveConfig(join(repoRoot, 'src', 'index.ts'));
  assert.equal(await prettier.check('const  x = {a:1}\n', { ...options, filepath: 'probe.ts' }), false);
  assert.equal(await prettier.check('const x = { a: 1 };\n', { ...options, filepath: 'probe.ts' }), true);
});
