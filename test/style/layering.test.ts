// Which folder of src/ may import which (docs/architecture.md, "Folder layout"). The table below mirrors the
// doc's, and a test checks that it does; another reads every import in src/ and fails on one the table does
// not allow and no listed exception explains. An exception that no longer occurs must leave the list, so
// the list stays the honest size of the debt.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = new URL('../../..', import.meta.url).pathname;

/** Top-level files that start and wire the service; every other top-level file is a leaf (the 'leaves' row). */
const WIRING_FILES = new Set(['src/main.ts', 'src/app.ts', 'src/services.ts', 'src/index.ts']);

const MAY_IMPORT: Record<string, readonly string[] | 'everything'> = {
  leaves: [],
  wiring: 'everything',
  crypto: ['leaves'],
  ops: ['leaves'],
  schemas: ['leaves'],
  wal: ['leaves'],
  store: ['leaves', 'schemas'],
  users: ['leaves', 'store'],
  preferences: ['leaves', 'schemas', 'store'],
  markets: ['leaves', 'schemas', 'store'],
  auth: ['leaves', 'crypto', 'store'],
  oracle: ['leaves', 'crypto', 'schemas', 'store', 'markets'],
  ledger: ['leaves', 'schemas', 'store', 'users'],
  engine: ['leaves', 'wal', 'store', 'ledger'],
  rfq: ['leaves', 'crypto', 'schemas', 'store', 'ops', 'users', 'preferences', 'markets', 'auth', 'ledger', 'engine', 'mm'],
  contests: ['leaves', 'schemas', 'store', 'markets', 'auth', 'ledger', 'rfq'],
  mm: ['leaves', 'crypto', 'schemas', 'store', 'auth'],
  http: ['leaves', 'crypto', 'schemas', 'ops', 'auth', 'markets', 'ledger', 'rfq', 'contests', 'mm'],
  dashboard: ['leaves', 'schemas', 'http', 'markets', 'contests', 'mm'],
  sdk: ['crypto', 'schemas'],
};

interface Exception {
  /** A file, or a folder prefix ending in '/'. */
  from: string;
  /** A file, or a folder prefix ending in '/' ('src/' for any). */
  to: string;
  why: string;
}

/** The doc's exception table, one row per (from, to) pair. */
const EXCEPTIONS: readonly Exception[] = [
  { from: 'src/config.ts', to: 'src/crypto/address.ts', why: 'oracle addresses checked at start with the one address parser' },
  { from: 'src/config.ts', to: 'src/crypto/maker-challenge.ts', why: "the domain tag's pattern, stated by the challenge format" },
  { from: 'src/config.ts', to: 'src/schemas/convert-strings.ts', why: 'env strings converted as query strings are' },
  { from: 'src/schemas/', to: 'src/http/paging.ts', why: 'page query and next_cursor properties live with the cursor codec' },
  { from: 'src/schemas/openapi.ts', to: 'src/http/route.ts', why: 'the document is built from the route definitions (type)' },
  { from: 'src/schemas/asyncapi.ts', to: 'src/mm/protocol.ts', why: "the socket's path" },
  { from: 'src/schemas/rfq.ts', to: 'src/rfq/codec.ts', why: "leg count and order types are the signing format's bounds" },
  { from: 'src/schemas/mm.ts', to: 'src/rfq/codec.ts', why: "leg count is the signing format's bound" },
  { from: 'src/schemas/views.ts', to: 'src/ledger/accounts.ts', why: 'bucket and transfer kinds (type)' },
  { from: 'src/store/records.ts', to: 'src/', why: 'the map of database -> record type (types only)' },
  { from: 'src/store/migrations.ts', to: 'src/contests/records.ts', why: "migrations rewrite owners' records at start" },
  { from: 'src/store/migrations.ts', to: 'src/ledger/', why: "migrations rewrite owners' records at start" },
  { from: 'src/store/migrations.ts', to: 'src/rfq/records.ts', why: "migrations rewrite owners' records at start" },
  { from: 'src/store/migrations.ts', to: 'src/rfq/fills.ts', why: "migrations rewrite owners' records at start" },
  { from: 'src/auth/sessions.ts', to: 'src/http/bearer.ts', why: 'implements the TokenResolver the bearer check declares (type)' },
  { from: 'src/ledger/holds-audit.ts', to: 'src/contests/records.ts', why: 'holds checked against the records they stand for' },
  { from: 'src/ledger/holds-audit.ts', to: 'src/rfq/records.ts', why: 'holds checked against the records they stand for' },
  { from: 'src/ledger/owners.ts', to: 'src/rfq/messages.ts', why: 'a money operation travels as a shard message (type)' },
  { from: 'src/ledger/withdrawals.ts', to: 'src/rfq/messages.ts', why: 'a money operation travels as a shard message (type)' },
  { from: 'src/ledger/credits.ts', to: 'src/mm/registry.ts', why: 'a maker credit needs a registered maker (type)' },
  { from: 'src/rfq/engine.ts', to: 'src/services.ts', why: 'takes the services bag (type)' },
  { from: 'src/dashboard/dashboard.ts', to: 'src/services.ts', why: 'takes the services bag (type)' },
  { from: 'src/http/routes/', to: 'src/services.ts', why: 'routes take the services bag (type)' },
  { from: 'src/rfq/positions-view.ts', to: 'src/contests/views.ts', why: 'the shared market lookup type' },
  { from: 'src/rfq/maker-fills-view.ts', to: 'src/contests/views.ts', why: 'the shared market lookup type' },
  { from: 'src/mm/upgrade.ts', to: 'src/http/caller-network.ts', why: 'the socket upgrade uses the HTTP per-network limiter' },
  { from: 'src/mm/upgrade.ts', to: 'src/http/rate-limit.ts', why: 'the socket upgrade is charged to the HTTP per-IP token bucket' },
  { from: 'src/mm/gateway.ts', to: 'src/http/rate-limit.ts', why: 'the socket upgrade uses the HTTP per-network limiter' },
  { from: 'src/mm/desk.ts', to: 'src/rfq/active-rfq.ts', why: 'the desk shows live RFQs (type)' },
  { from: 'src/http/routes/dashboard.ts', to: 'src/dashboard/assets.ts', why: "the page's asset type (type)" },
  { from: 'src/sdk/', to: 'src/mm/protocol.ts', why: 'the socket path and message names; no server code' },
];

function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts.length > 2) return parts[1]!;
  return WIRING_FILES.has(file) ? 'wiring' : 'leaves';
}

function sourceFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return path.endsWith('.ts') ? [path] : [];
  return readdirSync(path).flatMap((name) => sourceFiles(join(path, name)));
}

const matches = (pattern: string, file: string) => (pattern.endsWith('/') ? file.startsWith(pattern) : file === pattern);

/** Every import of a file of src/ from another folder of src/, as `from -> to` (repository paths, .ts). */
function crossFolderImports(): Array<{ from: string; to: string }> {
  const edges: Array<{ from: string; to: string }> = [];
  for (const path of sourceFiles(join(ROOT, 'src'))) {
    const from = relative(ROOT, path);
    // Static imports, re-exports and dynamic imports alike.
    for (const { fileName } of ts.preProcessFile(readFileSync(path, 'utf8'), true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const to = relative(ROOT, resolve(dirname(path), fileName)).replace(/\.js$/, '.ts');
      if (to.startsWith('src/') && folderOf(from) !== folderOf(to)) edges.push({ from, to });
    }
  }
  return edges;
}

function isAllowed(from: string, to: string): boolean {
  const allowed = MAY_IMPORT[folderOf(from)];
  assert.ok(allowed !== undefined, `${from}: folder ${folderOf(from)} is not in the table`);
  return allowed === 'everything' || allowed.includes(folderOf(to));
}

test('every import between folders of src/ is one the layering table allows, or a listed exception', () => {
  const unexplained = crossFolderImports()
    .filter(({ from, to }) => !isAllowed(from, to) && !EXCEPTIONS.some((e) => matches(e.from, from) && matches(e.to, to)))
    .map(({ from, to }) => `${from} -> ${to}`);
  assert.deepEqual(unexplained, []);
});

test('every listed exception still occurs (a paid debt leaves the list)', () => {
  const edges = crossFolderImports().filter(({ from, to }) => !isAllowed(from, to));
  const unused = EXCEPTIONS.filter((e) => !edges.some(({ from, to }) => matches(e.from, from) && matches(e.to, to)));
  assert.deepEqual(unused, []);
});

test('every folder of src/ has a row, and the table mirrors docs/architecture.md', () => {
  const folders = readdirSync(join(ROOT, 'src')).filter((name) => statSync(join(ROOT, 'src', name)).isDirectory());
  assert.deepEqual(
    Object.keys(MAY_IMPORT)
      .filter((f) => f !== 'leaves' && f !== 'wiring')
      .sort(),
    folders.sort(),
  );
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Folder layout'), doc.indexOf("Today's exceptions"));
  const documented: Record<string, readonly string[] | 'everything'> = {};
  for (const [, folder, mayImport] of section.matchAll(/^\| `([a-z]+)\/?` \|[^\n]*\| ([^|\n]+) \|$/gm)) {
    const cell = mayImport!.trim();
    documented[folder!] = cell === 'everything' ? 'everything' : cell === '—' ? [] : cell.split(', ');
  }
  assert.deepEqual(documented, MAY_IMPORT);
});
