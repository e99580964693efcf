// `npm run demo`: parlayd with something to look at (issue 23). Starts the service on its defaults
// (127.0.0.1:8080; PARLAYD_* variables in the environment still apply) with its data in a fresh temporary
// directory (removed at the end, so ./data is never touched), the oracle feeder signing prices for the
// windows, four makers with different prices, latencies and last-look habits (on the SDK), three takers at
// a few RFQs a second, and a contest that fills and resolves, again and again. Prints the dashboard's URL
// with a generated admin token in its fragment (which the browser never sends: the page moves it to the
// tab's sessionStorage). Ctrl-C stops everything, the service last, and removes the data directory.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { randomOracleKey } from '../src/oracle/report-signer.js';
import { startMakers, type RunningMaker } from './demo/makers.js';
import { startTraffic, type Traffic } from './demo/traffic.js';
import { Progress } from './progress.js';

const DIST_DIR = join(fileURLToPath(import.meta.url), '..', '..');
const TAKERS = 3;

/** Starts `script` (under dist/) with `env`; its output goes to `logPath`. */
function startChild(script: string, args: string[], env: Record<string, string>, logPath: string): ChildProcess {
  const child = spawn(process.execPath, ['--single-threaded-gc', join(DIST_DIR, script), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(logPath, { flags: 'a' });
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  return child;
}

/** Resolves with the port of the service's `listening` line; rejects if it exits first. */
function whenListening(service: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    createInterface({ input: service.stdout! }).on('line', (line) => {
      if (!line.includes('"listening"')) return;
      resolve((JSON.parse(line) as { port: number }).port);
    });
    service.once('exit', (code) =>
      reject(new Error(`the service exited with ${code} before listening (is port ${process.env['PARLAYD_PORT'] ?? 8080} taken?)`)),
    );
  });
}

function stopChild(child: ChildProcess | null): Promise<void> {
  if (child === null || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function main(): Promise<void> {
  const dataDir = process.env['PARLAYD_DATA_DIR'] ?? mkdtempSync(join(tmpdir(), 'parlayd-demo-'));
  const isOwnDataDir = process.env['PARLAYD_DATA_DIR'] === undefined;
  const logPath = join(dataDir, 'demo.log');
  const adminToken = process.env['PARLAYD_ADMIN_TOKEN'] ?? randomBytes(24).toString('base64url');
  const oracleKey = randomOracleKey();
  const progress = new Progress('demo start-up', 5);
  let service: ChildProcess | null = null;
  let feeder: ChildProcess | null = null;
  let makers: RunningMaker[] = [];
  let traffic: Traffic | null = null;
  let isStopping = false;

  const stop = async (exitCode: number) => {
    if (isStopping) return;
    isStopping = true;
    progress.end();
    process.stderr.write('\ndemo: stopping (takers, makers, oracle feeder, then the service)…\n');
    await traffic?.stop();
    for (const maker of makers) maker.close();
    await stopChild(feeder);
    await stopChild(service);
    if (isOwnDataDir) rmSync(dataDir, { recursive: true, force: true });
    process.stderr.write('demo: stopped\n');
    process.exit(exitCode);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  try {
    progress.update(0, 'starting the service');
    service = startChild(
      'src/main.js',
      [],
      { PARLAYD_DATA_DIR: dataDir, PARLAYD_ADMIN_TOKEN: adminToken, PARLAYD_ORACLE_ADDRESSES: oracleKey.address },
      logPath,
    );
    const port = await whenListening(service);
    const host = process.env['PARLAYD_HOST'] ?? '127.0.0.1';
    const api = { baseUrl: `http://${host}:${port}`, adminToken };
    progress.update(1, 'starting the oracle feeder');
    // The key goes in the environment, so the feeder does not print it (scripts/oracle-feed.ts).
    feeder = startChild(
      'scripts/oracle-feed.js',
      ['--url', api.baseUrl],
      { PARLAYD_ORACLE_KEY: '0x' + Buffer.from(oracleKey.privateKey).toString('hex') },
      logPath,
    );
    progress.update(2, 'registering and connecting makers');
    makers = await startMakers(api, `ws://${host}:${port}`);
    progress.update(3, 'funding takers and contest players');
    traffic = await startTraffic(api, TAKERS, (line) => progress.print(`demo: ${line}`, process.stderr));
    progress.update(5, 'running');
    progress.end();
    // The URL carries the token on purpose: the person who ran the demo asked for it. The fragment stays in
    // the browser; the service never sees or logs it.
    process.stderr.write(
      `\nparlayd demo running: ${makers.length} makers, ${TAKERS} takers, the oracle feeder, a contest every ~50 s.\n` +
        `Dashboard: ${api.baseUrl}/dashboard#token=${adminToken}\n` +
        `Service log: ${logPath}\nCtrl-C stops everything.\n\n`,
    );
  } catch (err) {
    process.stderr.write(`demo: ${err instanceof Error ? err.message : String(err)}\n`);
    await stop(1);
  }
}

void main();
