// Main thread, at start. The process's open-files limit (RLIMIT_NOFILE), for the 'listening' log line. Every
// connection holds a file descriptor; when they run out, uSockets' accept loop spins on EMFILE (docs/
// reliability.md, "Connections"), so an operator must see the figure. Node raises the soft limit to the hard
// one itself as it starts (src/node.cc, PlatformInit: "Raise the open file descriptor limit"), so there is
// nothing to raise here: what is read is the limit the service runs with, and the hard limit is the one to
// set (systemd LimitNOFILE, docker --ulimit nofile, /etc/security/limits.conf). Linux only (/proc); null elsewhere.
import { readFileSync } from 'node:fs';

export interface OpenFilesLimit {
  soft: number | 'unlimited';
  hard: number | 'unlimited';
}

/** The "Max open files" row of /proc/<pid>/limits text, or null when there is none. */
export function parseOpenFilesLimit(limitsText: string): OpenFilesLimit | null {
  const row = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)\s+files\s*$/m.exec(limitsText);
  if (row === null) return null;
  const value = (text: string) => (text === 'unlimited' ? 'unlimited' : Number(text));
  return { soft: value(row[1]!), hard: value(row[2]!) };
}

/** This process's limit, or null where /proc/self/limits cannot be read. */
export function readOpenFilesLimit(): OpenFilesLimit | null {
  try {
    return parseOpenFilesLimit(readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    // Not Linux: the figure is only shown, so its absence changes nothing.
    return null;
  }
}
