// `npm run fuzz -- --seed N --count N`: starts the real service (a child process on 127.0.0.1, LMDB in a
// temp dir), funds three users, sends seeded mutated and random requests to every route of the served
// OpenAPI document and random messages on a logged-in maker socket (fuzz/run.ts), then checks: no 5xx but
// 503 OVERLOADED, every 4xx the contract's error body, the funded balances unchanged (the fuzzer never sends
// a valid bearer to a route that writes), /healthz 200 at the end, a clean stop, and the ledger audit of the
// data dir. Exits 1 on any failure. test/ops/fuzz.test.ts runs a few hundred requests of a fixed seed.
import { rmSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { auditLedger } from '../src/ledger/audit.js';
import { openStore } from '../src/store/db.js';
import { client } from '../test/helpers/http.js';
import { startServer, type TestServer } from '../test/helpers/server.js';
import { fundedUser, type TestUser } from '../test/helpers/users.js';
import { runFuzz, type FuzzReport } from './fuzz/run.js';
import { Progress } from './progress.js';

const FUNDS_MICROS = 50_000_000;

async function balances(server: TestServer, users: TestUser[]): Promise<string[]> {
  return Promise.all(users.map(async (user) => JSON.stringify((await client(server.baseUrl, user.token).get('/v1/user/balance')).body)));
}

/** One whole run; the report's failures list every break found (empty: passed). */
export async function fuzzService(
  seed: number,
  count: number,
  maxMs = 120_000,
  onProgress?: (report: Readonly<FuzzReport>) => void,
): Promise<FuzzReport> {
  // No rate limit: the fuzzer is one caller on one address, and a 429 answer would hide the route's own.
  const server = await startServer({ env: { PARLAYD_RATE_LIMIT_PER_S: '0' } });
  try {
    const users = await Promise.all(Array.from({ length: 3 }, () => fundedUser(server, FUNDS_MICROS)));
    const before = await balances(server, users);
    const report = await runFuzz(server, {
      seed,
      count,
      userToken: users[0]!.token,
      maxMs,
      ...(onProgress === undefined ? {} : { onProgress }),
    });
    const health = await client(server.baseUrl).get('/healthz');
    if (health.status !== 200) report.failures.push(`/healthz answered ${health.status}`);
    const after = await balances(server, users);
    if (JSON.stringify(after) !== JSON.stringify(before)) report.failures.push(`balances moved: ${before.join(' ')} -> ${after.join(' ')}`);
    const exitCode = await server.stop();
    if (exitCode !== 0) report.failures.push(`the service exited with ${exitCode}: ${server.stderr.slice(-5).join(' | ')}`);
    const store = openStore(server.dataDir);
    try {
      for (const difference of auditLedger(store).differences) report.failures.push(`ledger: ${difference}`);
    } finally {
      await store.close();
    }
    return report;
  } finally {
    await server.kill();
    rmSync(server.dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { seed: { type: 'string', default: String(Date.now() % 1e9) }, count: { type: 'string', default: '2000' } },
  });
  const seed = Number(values.seed);
  const count = Number(values.count);
  if (!Number.isSafeInteger(seed) || !Number.isSafeInteger(count) || count < 1 || count > 1_000_000) {
    throw new Error('usage: npm run fuzz -- --seed <integer> --count <1..1000000>');
  }
  // Bounded in time as well as count: about 2 ms a request on a quiet machine, ten times that at most.
  // count requests, then count/5 maker messages (scripts/fuzz/run.ts).
  const progress = new Progress('fuzz', count + Math.ceil(count / 5));
  progress.update(0, 'starting the service');
  const report = await fuzzService(seed, count, Math.max(60_000, count * 20), (r) =>
    progress.update(r.requests + r.makerMessages, r.makerMessages === 0 ? 'HTTP requests' : 'maker messages'),
  );
  progress.end();
  console.log(JSON.stringify({ seed, count, requests: report.requests, makerMessages: report.makerMessages, byStatus: report.byStatus }));
  for (const failure of report.failures.slice(0, 50)) console.log(`FAIL ${failure}`);
  console.log(report.failures.length === 0 ? `fuzz passed (seed ${seed})` : `fuzz found ${report.failures.length} failures (seed ${seed})`);
  process.exitCode = report.failures.length === 0 ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
