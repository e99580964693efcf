// Load generator, main thread. Starts the real service as a child process (`node dist/src/main.js` with the
// flags of `npm start`, as a user runs it) on PARLAYD_PORT=0 with a fresh temp PARLAYD_DATA_DIR, reads the port from its JSON
// 'listening' log line, and can read the child's memory from /proc. Node flags (e.g. --cpu-prof) pass
// through, so a scenario that misses its target can be profiled on the real server.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url)); // <repo>/dist/bench/load
export const repoRoot = resolve(here, '../../..');
// BENCH_SERVER_SCRIPT runs another build's service under this generator (alternated A/B runs of two builds
// with the same load generator: docs/performance.md; scenario `ab` alternates two within one run).
const mainScript = resolve(process.env['BENCH_SERVER_SCRIPT'] ?? resolve(repoRoot, 'dist/src/main.js'));

/**
 * The Node flags `npm start` gives the service (package.json), so that what is measured is what ships:
 * `--single-threaded-gc` today (docs/performance.md). BENCH_NODE_ARGS replaces them for experiments.
 */
export function npmStartNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(resolve(repoRoot, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const words = pkg.scripts.start.split(/\s+/);
  if (words[0] !== 'node' || words.at(-1) !== 'dist/src/main.js') throw new Error(`unexpected start script: ${pkg.scripts.start}`);
  return words.slice(1, -1);
}

/** What every benchmark server runs with unless a scenario says otherwise. */
export const BENCH_ENV: Readonly<Record<string, string>> = {
  // The generator plays thousands of callers from a few sessions: per-caller limits would measure the
  // limiter (docs/architecture.md says the load generator turns it off).
  PARLAYD_RATE_LIMIT_PER_S: '0',
  PARLAYD_AUTH_RATE_LIMIT_PER_S: '0',
  PARLAYD_AUTH_RATE_LIMIT_PER_NETWORK_PER_S: '0',
  // Its takers all log in from 127.0.0.1, more than an IP's share of the used login nonces.
  PARLAYD_LOGIN_NONCES_PER_IP: '100000',
  PARLAYD_LOGIN_NONCES_PER_NETWORK: '100000',
  // Likewise every maker of the farm connects from 127.0.0.1: the per-address bound on sockets awaiting
  // authentication (16 by default) would refuse the fan-out and handshake scenarios' connection bursts.
  PARLAYD_MM_MAX_PENDING_AUTH_PER_IP: '1024',
  // Info, as deployed (and the port is read from the 'listening' line). Nothing on the RFQ path logs at info.
  PARLAYD_LOG_LEVEL: 'info',
  PARLAYD_WAGER_MIN_MICROS: '1000000',
  PARLAYD_WAGER_MAX_MICROS: '1000000000000',
};

export interface BenchServer {
  baseUrl: string;
  wsUrl: string;
  port: number;
  pid: number;
  adminToken: string;
  dataDir: string;
  env: Record<string, string>;
  /** Resident memory of the child from /proc/<pid>/status, bytes. */
  memory(): ProcessMemory;
  /** SIGTERM, wait for exit, remove the data dir. */
  stop(): Promise<void>;
}

export interface ProcessMemory {
  rssBytes: number;
  rssAnonBytes: number;
  rssFileBytes: number;
}

export interface StartOptions {
  env?: Record<string, string>;
  /** Extra node flags before the script, e.g. ['--cpu-prof', '--cpu-prof-dir=/tmp/prof']. */
  nodeArgs?: string[];
  /** The service's entry point: another build's `dist/src/main.js` (scenario `ab`); default mainScript. */
  script?: string;
}

/** "K=V K2=V2" (values without spaces or '='): BENCH_SERVER_ENV, and scenario ab's BENCH_AB_ENV. */
export function parseServiceEnv(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split(' ')
      .filter((kv) => kv.includes('='))
      .map((kv) => kv.split('=', 2) as [string, string]),
  );
}

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

export async function startParlayd(options: StartOptions = {}): Promise<BenchServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parlayd-bench-'));
  const env: Record<string, string> = {
    ...BENCH_ENV,
    PARLAYD_PORT: '0',
    PARLAYD_HOST: '127.0.0.1',
    PARLAYD_DATA_DIR: dataDir,
    PARLAYD_ADMIN_TOKEN: randomBytes(24).toString('base64url'),
    // BENCH_SERVER_ENV="PARLAYD_SHARDS=2 ..." sets service variables for experiments; a scenario's own win.
    ...parseServiceEnv(process.env['BENCH_SERVER_ENV'] ?? ''),
    ...options.env,
  };
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), options.script ?? mainScript], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderr.push(line);
    if (process.env['BENCH_ECHO'] === '1') console.error(line); // the service's own log, for diagnostics
    if (stderr.length > 200) stderr.shift();
  });
  const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
  const port = await new Promise<number>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`parlayd did not start: ${stderr.join('\n')}`)), 20_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (process.env['BENCH_ECHO'] === '1') console.error(line); // and its stdout (V8's --trace-gc lines go there)
      if (!line.includes('"listening"')) return;
      const entry = JSON.parse(line) as { port?: number };
      clearTimeout(timer);
      done(entry.port!);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`parlayd exited with ${code} before listening: ${stderr.join('\n')}`));
    });
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    port,
    pid: child.pid!,
    adminToken: env['PARLAYD_ADMIN_TOKEN']!,
    dataDir,
    env,
    memory: () => readMemory(child.pid!),
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
      children.delete(child);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** VmRSS, RssAnon and RssFile of a process (Linux /proc), in bytes. */
export function readMemory(pid: number): ProcessMemory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rssBytes: kib('VmRSS'), rssAnonBytes: kib('RssAnon'), rssFileBytes: kib('RssFile') };
}
