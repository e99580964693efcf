// Any thread. Which thread of the service is which: Linux names every Node thread "node", so each worker
// thread of ours says who it is once, at its start. It reads its own kernel thread id from /proc/thread-self
// and announces it on a BroadcastChannel, which reaches the main thread of the same process whichever thread
// posts; ops/thread-cpu.ts listens there and shows CPU per thread by role.
import { readlinkSync } from 'node:fs';
import { BroadcastChannel } from 'node:worker_threads';

export const THREAD_ROLES_CHANNEL = 'parlayd:threads';

export interface ThreadAnnouncement {
  role: string;
  tid: number;
}

/** This thread's kernel id (Linux), or null where /proc/thread-self does not exist. */
function currentTid(): number | null {
  try {
    return Number(readlinkSync('/proc/thread-self').split('/').at(-1));
  } catch {
    return null;
  }
}

/** Called once by a worker thread at its start: its CPU is shown under `role` (a shard: `shard-<n>`). */
export function announceThread(role: string): void {
  const tid = currentTid();
  if (tid === null) return;
  const channel = new BroadcastChannel(THREAD_ROLES_CHANNEL);
  channel.postMessage({ role, tid } satisfies ThreadAnnouncement);
  channel.close();
}
