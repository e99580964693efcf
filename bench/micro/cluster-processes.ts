// The processes bench/micro/cluster-money.ts measures: owner nodes (src/cluster/shard-node-main.ts) and the
// echo responder (nats-echo.ts), each a Node process of its own that says "listening" on stdout when it takes
// calls; and a CPU meter over them, nats-server and this process, read as deltas of /proc/<pid>/stat (all of
// a process's threads: the journal's writes on libuv's pool count for the node that makes them), and of a
// node's busiest thread (/proc/<pid>/task/<tid>/stat): each owner decides on a worker thread of its own, and
// one near 100 % of a core is the limit.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { childCpuMs } from '../load/cpu.js';

// USER_HZ, as bench/load/cpu.ts counts /proc in: 100 on every Linux this runs on.
const TICKS_PER_S = 100;

/** Node's flags for the spawned processes: those `npm start` runs the service with, so their CPU is the service's. */
const NODE_FLAGS = ['--single-threaded-gc'];

/** A spawned Node process that has said "listening". */
export class ListeningProcess {
  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
  ) {}

  get pid(): number {
    return this.child.pid!;
  }

  /**
   * Spawns `script` with `env` added to this process's and resolves once it logs a JSON line with msg
   * "listening". `nodeArgs`: more Node flags (a profile: bench:load's --cpu-prof).
   */
  static async start(
    name: string,
    script: string,
    env: Record<string, string>,
    nodeArgs: readonly string[] = [],
  ): Promise<ListeningProcess> {
    const child = spawn(process.execPath, [...NODE_FLAGS, ...nodeArgs, script], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...env },
    });
    const lines = createInterface({ input: child.stdout! });
    const exited = once(child, 'exit').then(([code]) => {
      throw new Error(`${name} exited (${String(code)}) before it listened`);
    });
    const listening = (async () => {
      for await (const line of lines) if (line.startsWith('{') && (JSON.parse(line) as { msg?: string }).msg === 'listening') return;
    })();
    try {
      await Promise.race([listening, exited]);
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
    lines.close();
    child.stdout!.resume(); // its later log lines are read and dropped, so a full pipe never stalls it
    return new ListeningProcess(name, child);
  }

  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves once it is gone. */
  async stop(graceMs = 5_000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
}

/** Whether a process of this pid still exists (a zombie counts: not yet reaped). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The CPU the named processes and this one (`caller`) used over an interval, in ms, and the interval's length. */
export interface CpuInterval {
  seconds: number;
  cpuMs: Record<string, number>;
  /** Every other process of the machine, in ms: what it took from the cores shared with the measured ones. */
  othersMs: number;
  /** The busiest thread of each process in `threadsOf`, in ms: near the interval's length, that thread is the limit. */
  busiestThreadMs: Record<string, number>;
}

/** CPU busy time of the whole machine, in ms (/proc/stat: every state but idle and iowait, all cores). */
function machineBusyMs(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = fields;
  return ((user + nice + system + irq + softirq) * 1000) / TICKS_PER_S;
}

/** CPU time of each thread of process `pid`, in ms, by thread id (a thread that ended since is absent). */
function threadsCpuMs(pid: number): Map<string, number> {
  const threads = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      threads.set(tid, childCpuMs(`${pid}/task/${tid}`));
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return threads;
}

/**
 * Starts measuring the CPU of `pids` (by name) and of this process, and of each thread of the processes named
 * in `threadsOf`; call the result at the interval's end.
 */
export function startCpuInterval(pids: Readonly<Record<string, number>>, threadsOf: readonly string[] = []): () => CpuInterval {
  const read = (): Record<string, number> => {
    const { user, system } = process.cpuUsage();
    const cpuMs: Record<string, number> = { caller: (user + system) / 1000 };
    for (const [name, pid] of Object.entries(pids)) cpuMs[name] = childCpuMs(pid);
    return cpuMs;
  };
  const readThreads = () => new Map(threadsOf.map((name) => [name, threadsCpuMs(pids[name]!)]));
  const startMs = performance.now();
  const start = read();
  const threadsStart = readThreads();
  const machineStartMs = machineBusyMs();
  return () => {
    const end = read();
    const threadsEnd = readThreads();
    const machineMs = machineBusyMs() - machineStartMs;
    const cpuMs: Record<string, number> = {};
    for (const name of Object.keys(end)) cpuMs[name] = end[name]! - start[name]!;
    const busiestThreadMs: Record<string, number> = {};
    for (const name of threadsOf) {
      const before = threadsStart.get(name)!;
      let busiest = 0;
      for (const [tid, ms] of threadsEnd.get(name)!) busiest = Math.max(busiest, ms - (before.get(tid) ?? 0));
      busiestThreadMs[name] = busiest;
    }
    const oursMs = Object.values(cpuMs).reduce((a, b) => a + b, 0);
    return { seconds: (performance.now() - startMs) / 1000, cpuMs, othersMs: Math.max(0, machineMs - oursMs), busiestThreadMs };
  };
}
