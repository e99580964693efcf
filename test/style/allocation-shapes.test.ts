// Two object-literal shapes that V8 (Node 20) keeps alive through every young-generation collection until
// the next full one, with everything they reach: an object made by a leading spread and then given more
// properties (`{ ...a, b }`, `{ ...a, ...b }`), and an accessor in an object literal (`{ get x() {} }`).
// Made per request, they promoted ~1 MB per scavenge on the main thread at 2,000 RFQ/s and made its
// scavenges 3-4 ms long instead of ~1 ms (docs/performance.md, "Allocation shapes"). No functional test can
// see that, so this one reads the source of the request path. The fixes: build the object field by field,
// put a literal property first (`{ kind, ...a, b }` is measured clean), or use a class.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const ROOT = new URL('../../..', import.meta.url).pathname;
/** What a request or an RFQ runs through. */
const REQUEST_PATH = ['src/http', 'src/rfq', 'src/mm', 'src/ledger', 'src/preferences', 'src/store', 'src/auth/sessions.ts'];

function sourceFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .flatMap((name) => sourceFiles(join(path, name)))
    .filter((file) => file.endsWith('.ts'));
}

/** `line: why` of each such literal in `text`. */
function findShapes(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const report = (node: ts.Node, why: string) => found.push(`${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${why}`);
  const visit = (node: ts.Node): void => {
    if (ts.isObjectLiteralExpression(node)) {
      const [first, ...rest] = node.properties;
      if (first !== undefined && ts.isSpreadAssignment(first) && rest.length > 0) report(node, 'leading spread, then more');
      for (const property of node.properties) {
        if (ts.isGetAccessorDeclaration(property) || ts.isSetAccessorDeclaration(property)) report(property, 'accessor in a literal');
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

test('the request path builds no object literal of a shape V8 keeps alive past young-generation collections', () => {
  const found = REQUEST_PATH.flatMap((path) => sourceFiles(join(ROOT, path))).flatMap((file) =>
    findShapes(file, readFileSync(file, 'utf8')).map((where) => `${relative(ROOT, file)}:${where}`),
  );
  assert.deepEqual(found, []);
});

test('the check tells those shapes from the clean ones', () => {
  const text = [
    'const a = { x: 1 };',
    'export const spreadThenMore = { ...a, y: 2 };',
    'export const twoSpreads = { ...a, ...a };',
    'export const accessor = { get z() { return 1; } };',
    'export const literalFirst = { k: 0, ...a, y: 2 };',
    'export const copy = { ...a };',
    'export class Getter { get z() { return 1; } }',
  ].join('\n');
  assert.deepEqual(findShapes('probe.ts', text), [
    '2: leading spread, then more',
    '3: leading spread, then more',
    '4: accessor in a literal',
  ]);
});
