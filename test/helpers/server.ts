// Starts the real service as a child process on a loopback port with its LMDB in a temp dir, the way a user
// runs it (`node dist/src/main.js`). A child process (not an in-process server) lets tests kill -9 it and
// restart it on the same data.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
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
  /** SIGTERM and wait for exit. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit: a crash. */
  kill(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  dataDir?: string;
}

const started = new Set<TestServer>();
process.once('exit', () => {
  for (const server of started) server.process.kill('SIGKILL');
});

export async function startServer(options: StartOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'parlayd-test-'));
  const env: Record<string, string> = {
    PARLAYD_PORT: '0',
    PARLAYD_HOST: '127.0.0.1',
    PARLAYD_DATA_DIR: dataDir,
    PARLAYD_ADMIN_TOKEN: randomBytes(24).toString('base64url'),
    PARLAYD_SHARDS: '1',
    PARLAYD_VERIFY_THREADS: '1',
    PARLAYD_LOG_LEVEL: 'info',
    ...options.env,
  };
  const child = spawn(process.execPath, [mainScript], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  createInterface({ input: child.stderr! }).on('line', (line) => stderr.push(line));
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
    stop: async () => {
      started.delete(server);
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      started.delete(server);
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  started.add(server);
  return server;
}

/** Starts a new server process on the same data directory and settings (a restart). */
export function restartServer(previous: TestServer, env: Record<string, string> = {}): Promise<TestServer> {
  return startServer({ dataDir: previous.dataDir, env: { ...previous.env, PARLAYD_PORT: '0', ...env } });
}

export function removeDataDir(server: TestServer): void {
  rmSync(server.dataDir, { recursive: true, force: true });
}
