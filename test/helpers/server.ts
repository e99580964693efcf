// Starts the real service as a child process on a loopback port with its LMDB in a temp dir, the way a user
// runs it (`node dist/src/main.js`). A child process (not an in-process server) lets tests kill -9 it and
// restart it on the same data.
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { auditLedger } from '../../src/ledger/audit.js';
import { openStore } from '../../src/store/db.js';
import { mainScript } from './paths.js';

export interface TestServer {
  baseUrl: string;
  wsUrl: string;
  port: number;
  adminToken: string;
  dataDir: string;
  env: Record<string, string>;
  /** Log lines the server printed (JSON objects), for asserting on what was logged. */
  logs: Record<string, unknown>[];
  stderr: string[];
  process: ChildProcess;
  /** Resolves with the first log line (already printed or still to come) that matches; rejects after timeoutMs. */
  waitForLog(match: (entry: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** The same for stderr lines (configuration errors, the generated admin token). */
  waitForStderr(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /**
   * SIGTERM and wait for exit; then the ledger check on what it left (every balance against its journal and
   * its holds, every hold against its record: src/ledger/audit.ts), which fails the test on any difference.
   * So every end-to-end test that stops its server checks the money it moved.
   */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit: a crash. */
  kill(): Promise<void>;
  /** Resolves with the exit code once the process has ended and its output is read (holding this test's process alive meanwhile). */
  exited(): Promise<number | null>;
}

export interface StartOptions {
  env?: Record<string, string>;
  dataDir?: string;
}

const started = new Set<TestServer>();
process.once('exit', () => {
  for (const server of started) server.process.kill('SIGKILL');
});

/** The service's environment in tests: a free loopback port, `dataDir`, a fresh admin token, one thread each. */
export function testServiceEnv(dataDir: string): Record<string, string> {
  return {
    PARLAYD_PORT: '0',
    PARLAYD_HOST: '127.0.0.1',
    PARLAYD_DATA_DIR: dataDir,
    PARLAYD_ADMIN_TOKEN: randomBytes(24).toString('base64url'),
    PARLAYD_SHARDS: '1',
    PARLAYD_VERIFY_THREADS: '1',
    PARLAYD_LOG_LEVEL: 'info',
    // Tests log in many users from one loopback address; the tests of the auth limit set it themselves.
    PARLAYD_AUTH_RATE_LIMIT_PER_S: '0',
    PARLAYD_AUTH_RATE_LIMIT_PER_NETWORK_PER_S: '0',
    // The same for the used login nonces an IP (and its /24) may hold; the tests of those bounds set them.
    PARLAYD_LOGIN_NONCES_PER_IP: '100000',
    PARLAYD_LOGIN_NONCES_PER_NETWORK: '100000',
    // Tests assert the exact status of RFQ creates while two test files share 2 busy cores, where the main
    // thread does stall past the default 50 ms at times (GC, CPU taken by other processes): a 503 there would
    // be right for production and a flaky test here. The delay gate has tests of its own (load-shedder.test.ts).
    PARLAYD_MAX_EVENT_LOOP_DELAY_MS: '0',
    // The suite runs on either engine (docs/engine.md): `PARLAYD_ENGINE=journal npm test` runs it on the journal engine.
    ...(process.env['PARLAYD_ENGINE'] === undefined ? {} : { PARLAYD_ENGINE: process.env['PARLAYD_ENGINE'] }),
  };
}

export async function startServer(options: StartOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'parlayd-test-'));
  const env: Record<string, string> = { ...testServiceEnv(dataDir), ...options.env };
  const child = spawn(process.execPath, [mainScript], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  const lines = new EventEmitter(); // 'log' and 'stderr', after the line is in its array
  // 'close', not 'exit': it comes after stdout and stderr are drained, so `logs` is complete once stopped.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderr.push(line);
    lines.emit('stderr', line);
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr.join('\n')}`)), 15_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      logs.push(entry);
      lines.emit('log', entry);
      if (entry['msg'] === 'listening') {
        clearTimeout(timer);
        resolve(entry['port'] as number);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening: ${stderr.join('\n')}`));
    });
  });
  // Once it listens, the child and its pipes no longer keep this test's process alive: a test file whose tests
  // have ended exits even when a failed test left its server running, and the 'exit' handler above kills it
  // (held, a failed assertion kept the file running until CI's own timeout). Waiting for the child holds them.
  const pipes = [child.stdout as Socket, child.stderr as Socket];
  child.unref();
  for (const pipe of pipes) pipe.unref();
  const held = (): Promise<number | null> => {
    child.ref();
    for (const pipe of pipes) pipe.ref();
    return exited;
  };
  const server: TestServer = {
    baseUrl: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    port,
    adminToken: env['PARLAYD_ADMIN_TOKEN']!,
    dataDir,
    env,
    logs,
    stderr,
    process: child,
    waitForLog: (match, timeoutMs) => waitForLine(lines, 'log', logs, match, timeoutMs),
    waitForStderr: (match, timeoutMs) => waitForLine(lines, 'stderr', stderr, match, timeoutMs),
    stop: async () => {
      started.delete(server);
      if (child.exitCode === null) child.kill('SIGTERM');
      const code = await held();
      await assertLedgerAgrees(dataDir);
      return code;
    },
    kill: async () => {
      started.delete(server);
      if (child.exitCode === null) child.kill('SIGKILL');
      await held();
    },
    exited: held,
  };
  started.add(server);
  return server;
}

function waitForLine<T>(
  lines: EventEmitter,
  event: string,
  seen: readonly T[],
  match: (line: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const earlier = seen.find(match);
    if (earlier !== undefined) return resolve(earlier);
    // A listener, not a loop of once(): readline emits several lines in one tick and none may be missed.
    const onLine = (line: T) => {
      if (!match(line)) return;
      stopWaiting();
      resolve(line);
    };
    const timer = setTimeout(() => {
      stopWaiting();
      reject(new Error(`no matching ${event} line within ${timeoutMs} ms`));
    }, timeoutMs);
    const stopWaiting = () => {
      clearTimeout(timer);
      lines.off(event, onLine);
    };
    lines.on(event, onLine);
  });
}

/** Starts a new server process on the same data directory and settings (a restart). */
export function restartServer(previous: TestServer, env: Record<string, string> = {}): Promise<TestServer> {
  return startServer({ dataDir: previous.dataDir, env: { ...previous.env, PARLAYD_PORT: '0', ...env } });
}

export function removeDataDir(server: TestServer): void {
  rmSync(server.dataDir, { recursive: true, force: true });
}

/** The ledger check on a stopped server's data directory: throws, listing them, on any difference. */
export async function assertLedgerAgrees(dataDir: string): Promise<void> {
  const store = openStore(dataDir);
  try {
    const { differences } = auditLedger(store);
    if (differences.length > 0)
      throw new Error(`the ledger check found ${differences.length} difference(s):\n${differences.slice(0, 20).join('\n')}`);
  } finally {
    await store.close();
  }
}
