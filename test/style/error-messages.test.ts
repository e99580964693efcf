// STYLE ("errors.ts is one small table of named error factories; nothing else invents an error message
// inline"): outside src/lib/errors.ts no `new ApiError(code, message)` or `apiError(code, message)` has a
// literal or template message, nor a literal detail message. A message passed on as data (a shard's
// refusal, carried across threads) is not invented there, so it passes. The files still listed below are
// other owners' to convert with the factories errors.ts already has.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const ROOT = new URL('../../..', import.meta.url).pathname;

/** Not yet converted (issue 17): each file's owner moves its messages to errors.ts factories. */
const PENDING = new Set<string>([]);

function sourceFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return path.endsWith('.ts') ? [path] : [];
  return readdirSync(path).flatMap((name) => sourceFiles(join(path, name)));
}

const isWritten = (node: ts.Node | undefined) =>
  node !== undefined && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node));

/** A detail list literal with a written message: `[{ path, message: '...' }]`. */
function hasWrittenDetail(node: ts.Node | undefined): boolean {
  if (node === undefined || !ts.isArrayLiteralExpression(node)) return false;
  return node.elements.some(
    (element) =>
      ts.isObjectLiteralExpression(element) &&
      element.properties.some((p) => ts.isPropertyAssignment(p) && p.name.getText() === 'message' && isWritten(p.initializer)),
  );
}

/** `line: text` of each error made with a written message in `text`. */
function findInlineMessages(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const isMaker =
      (ts.isNewExpression(node) && node.expression.getText() === 'ApiError') ||
      (ts.isCallExpression(node) && node.expression.getText() === 'apiError');
    if (isMaker) {
      const args = (node as ts.NewExpression | ts.CallExpression).arguments ?? ts.factory.createNodeArray();
      if (isWritten(args[1]) || hasWrittenDetail(args[2])) {
        found.push(`${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.getText().slice(0, 60)}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

test('no error message is written outside src/lib/errors.ts (but in the files still to convert)', () => {
  const byFile = new Map<string, string[]>();
  for (const path of sourceFiles(join(ROOT, 'src'))) {
    const file = relative(ROOT, path);
    if (file === 'src/lib/errors.ts') continue;
    const found = findInlineMessages(file, readFileSync(path, 'utf8'));
    if (found.length > 0) byFile.set(file, found);
  }
  const unexpected = [...byFile].filter(([file]) => !PENDING.has(file)).flatMap(([file, lines]) => lines.map((l) => `${file}:${l}`));
  assert.deepEqual(unexpected, []);
  // A converted file leaves the list, so the list is the work left.
  assert.deepEqual(
    [...PENDING].filter((file) => !byFile.has(file)),
    [],
  );
});

test('the check tells written messages from codes alone and messages passed on', () => {
  const text = [
    "throw new ApiError('MARKET_NOT_FOUND');",
    "throw new ApiError('MARKET_NOT_OPEN', `market ${id} is not open`);",
    "throw new ApiError('FORBIDDEN', 'no');",
    "throw new ApiError('VALIDATION_FAILED', undefined, [{ path: '/a', message: 'bad' }]);",
    'throw new ApiError(refusal.code, refusal.message);',
    "throw apiError('INTERNAL', 'oops');",
    'throw errors.marketNotOpen(id);',
  ].join('\n');
  assert.deepEqual(
    findInlineMessages('probe.ts', text).map((l) => l.split(':')[0]),
    ['2', '3', '4', '6'],
  );
});
