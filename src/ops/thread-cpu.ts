// Main thread. CPU per thread of the service, by role: what bounds a figure is usually one thread (the main
// thread's event loop, a shard's actor), and the process's total CPU cannot tell which. Worker threads
// announce their kernel ids (thread-announce.ts); the main thread is the process's own id. The gauge reads
// /proc/self/task/<tid>/stat at each scrape, so it costs nothing between scrapes.
//
// Threads that announce nothing (V8's platform workers and GC helpers, libuv's pool, lmdb-js's write thread)
// count as `other`. A thread that ended (a ledger check's worker) leaves the sum, and its role is forgotten at
// the next scrape: the gauge is for rates over intervals in which the threads live, as the load generator uses it. Elsewhere than Linux it is empty.
import { readFileSync, readdirSync } from 'node:fs';
import { BroadcastChannel } from 'node:worker_threads';
import { Gauge, type Registry } from 'prom-client';
import { THREAD_ROLES_CHANNEL, type ThreadAnnouncement } from '../lib/thread-announce.js';

/** USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK); /proc counts CPU in these ticks. */
const TICKS_PER_S = 100;

/** CPU seconds of one thread of this process (utime + stime), or null once it has ended. */
function threadCpuSeconds(tid: string): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
  } catch {
    return null;
  }
}

/** The main thread's record of which thread is which, and the gauge that reads their CPU by role. */
export class ThreadRoles {
  readonly #roleByTid = new Map<string, string>();
  readonly #channel = new BroadcastChannel(THREAD_ROLES_CHANNEL);

  constructor(registry: Registry) {
    this.#roleByTid.set(String(process.pid), 'main');
    this.#channel.onmessage = (event) => {
      const { role, tid } = (event as { data: ThreadAnnouncement }).data;
      this.#roleByTid.set(String(tid), role);
    };
    // Listening must not keep a stopping process alive.
    this.#channel.unref();
    const roles = this.#roleByTid;
    new Gauge({
      name: 'parlayd_thread_cpu_seconds',
      help: 'CPU seconds used by the threads alive now, by role (main, shard-<n>, verify, check; other: V8, libuv, lmdb-js), since each started',
      labelNames: ['thread'],
      registers: [registry],
      collect() {
        this.reset();
        const byRole = new Map<string, number>();
        let tids: string[] = [];
        try {
          tids = readdirSync('/proc/self/task');
        } catch {
          return;
        }
        for (const tid of tids) {
          const seconds = threadCpuSeconds(tid);
          if (seconds === null) continue;
          const role = roles.get(tid) ?? 'other';
          byRole.set(role, (byRole.get(role) ?? 0) + seconds);
        }
        // Threads that ended are forgotten: a ledger check starts workers of its own each time, and the
        // kernel may give an ended thread's id to another one, which must not inherit its role.
        const alive = new Set(tids);
        for (const tid of roles.keys()) if (!alive.has(tid)) roles.delete(tid);
        for (const [thread, seconds] of byRole) this.set({ thread }, Math.round(seconds * 100) / 100);
      },
    });
  }

  /** Threads whose role is known, the main thread's included. */
  get knownThreads(): number {
    return this.#roleByTid.size;
  }

  close(): void {
    this.#channel.close();
  }
}
