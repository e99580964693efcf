// A real nats-server (Debian's, `apt-get install nats-server`: .ci/run installs it) on a loopback port of its
// own, for the cluster's tests. Where it is not installed a local run skips with the reason; CI, which
// installs it, fails instead, so the cluster's tests can never pass by being skipped there.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { after, before } from 'node:test';
import { connect, type NatsConnection } from 'nats';
import { natsOptions } from '../../src/cluster/nats-options.js';
import { existsSync } from 'node:fs';
import { once } from 'node:events';

const CANDIDATES = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'];

/** The nats-server binary, or why there is none. */
export function natsServerBinary(): { path: string } | { missing: string } {
  const onPath = spawnSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' }).stdout.trim();
  const path = onPath !== '' ? onPath : CANDIDATES.find((candidate) => existsSync(candidate));
  if (path !== undefined) return { path };
  const missing = 'nats-server is not installed (apt-get install nats-server)';
  if (process.env.CI === 'true') throw new Error(`${missing}: .ci/run installs it, so CI must have it`);
  return { missing };
}

export class NatsServer {
  #child: ChildProcess | null = null;

  private constructor(
    private readonly binary: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** The running server's pid (a benchmark reads its CPU from /proc), or null while it is down. */
  get pid(): number | null {
    return this.#child?.pid ?? null;
  }

  /** Starts one on a free loopback port (`-p -1`: the server picks it) and resolves once it takes clients. */
  static async start(binary: string): Promise<NatsServer> {
    const { child, port } = await launch(binary, -1);
    const server = new NatsServer(binary, port);
    server.#child = child;
    return server;
  }

  /** Kills it (SIGKILL: every connection breaks at once). */
  async kill(): Promise<void> {
    const child = this.#child;
    this.#child = null;
    if (child === null || child.exitCode !== null) return;
    child.kill('SIGKILL');
    await once(child, 'exit');
  }

  /** Starts it again on the same port, as an operator's restart does. */
  async restart(): Promise<void> {
    await this.kill();
    this.#child = (await launch(this.binary, this.port)).child;
  }

  stop(): Promise<void> {
    return this.kill();
  }
}

async function launch(binary: string, port: number): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`nats-server exited (${code}) before it listened: ${log}`));
    child.once('exit', onExit);
    child.stderr!.setEncoding('utf8').on('data', (text: string) => {
      if (log.length < 1 << 16) log += text;
      const listening = /Listening for client connections on [^\s]+:(\d+)/.exec(log);
      if (listening === null) return;
      child.off('exit', onExit);
      child.stderr!.removeAllListeners('data').resume();
      resolve({ child, port: Number(listening[1]) });
    });
  });
}

/** A test file's nats-server and its own connection to it (natsForFile). */
export interface NatsFixture {
  /** Why the file's tests skip (no nats-server here), or false. */
  skip: string | false;
  /** The server, once the file's `before` ran. */
  readonly server: NatsServer;
  /** The test's own connection (looks, checks, money calls), once the file's `before` ran. */
  readonly nc: NatsConnection;
}

/** Registers the file's `before` (a nats-server started, a connection made) and `after` (both closed). */
export function natsForFile(): NatsFixture {
  const binary = natsServerBinary();
  const skip = 'missing' in binary ? binary.missing : false;
  let server: NatsServer | null = null;
  let nc: NatsConnection | null = null;
  before(async () => {
    if ('missing' in binary) return;
    server = await NatsServer.start(binary.path);
    nc = await connect({ servers: server.url, ...natsOptions('test') });
  });
  after(async () => {
    await nc?.close();
    await server?.stop();
  });
  const started = <T>(value: T | null): T => {
    if (value === null) throw new Error('the nats-server of this file is not started (read inside a test)');
    return value;
  };
  return {
    skip,
    get server() {
      return started(server);
    },
    get nc() {
      return started(nc);
    },
  };
}
