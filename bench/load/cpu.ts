// Load generator, main thread. CPU time of a child process (Linux /proc/<pid>/stat utime + stime, all its
// threads) and of this process, so a throughput figure can say which side was the limit: when the client
// is at 100 % of a core and the server is not, the figure is the client's, and server CPU per request is
// the comparison that still holds.
import { readFileSync } from 'node:fs';

// USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK); /proc/<pid>/stat counts in these ticks.
const TICKS_PER_S = 100;

export function childCpuMs(pid: number | string): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / TICKS_PER_S;
}

/** CPU time of the child's main thread (its event loop): the task whose id is the process's own. */
export function childMainThreadCpuMs(pid: number): number {
  return childCpuMs(`${pid}/task/${pid}`);
}

export function selfCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

export interface CpuShare {
  /** Percent of one core over the interval (200 = both cores of a 2-core machine). */
  serverPercent: number;
  clientPercent: number;
  /** The server's main thread alone (HTTP, maker sockets, admission); absent from results written before it was kept. */
  serverMainThreadPercent?: number;
}

/** Starts a CPU measurement of `serverPid` and this process; call the result at the end of the interval. */
export function startCpuMeter(serverPid: number): () => CpuShare {
  const wallStart = performance.now();
  const serverStart = childCpuMs(serverPid);
  const mainThreadStart = childMainThreadCpuMs(serverPid);
  const clientStart = selfCpuMs();
  return () => {
    const wallMs = performance.now() - wallStart;
    return {
      serverPercent: Math.round(((childCpuMs(serverPid) - serverStart) / wallMs) * 100),
      clientPercent: Math.round(((selfCpuMs() - clientStart) / wallMs) * 100),
      serverMainThreadPercent: Math.round(((childMainThreadCpuMs(serverPid) - mainThreadStart) / wallMs) * 100),
    };
  };
}
