// Comments in src/ say why the code is as it is, not how it came to be: history lives in commits and in the
// issues, where a reader who needs it looks. An issue number means nothing to someone who cloned the
// repository alone, and "as before" names a version of the code the reader cannot see.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { repoRoot } from '../helpers/paths.js';

/** Issue references ("issue 22", "Issue 18's", "issues 21 and 22") and comparisons with an unseen earlier version. */
const HISTORY = /\bissues? \d+|\bas before\b/i;

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? tsFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Each line of `source` that mentions history, as `path:line: text`. */
export function historyLines(path: string, source: string): string[] {
  return source.split('\n').flatMap((line, i) => (HISTORY.test(line) ? [`${path}:${i + 1}: ${line.trim()}`] : []));
}

test('no comment in src/ cites an issue number or an earlier version ("as before")', () => {
  const found = tsFiles(join(repoRoot, 'src')).flatMap((path) => historyLines(relative(repoRoot, path), readFileSync(path, 'utf8')));
  assert.deepEqual(found, []);
});

test('the check sees both kinds of history, and not the words elsewhere', () => {
  assert.equal(historyLines('a.ts', '// Issue 22: the desk\n').length, 1);
  assert.equal(historyLines('a.ts', '// answered as before\n').length, 1);
  assert.equal(historyLines('a.ts', "// issue 18's gauges\n").length, 1);
  assert.deepEqual(historyLines('a.ts', '// a token issued before its expiry\nconst issued = 1;\n'), []);
});
