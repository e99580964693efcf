// Load generator, main thread. What machine and load a run was measured on: results are only comparable
// within a run, and the note says where.
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg, totalmem } from 'node:os';

export interface MachineInfo {
  cores: number;
  cpuModel: string;
  node: string;
  memoryGiB: number;
  loadAverage1m: number;
}

export function machineInfo(): MachineInfo {
  let cpuModel = 'unknown';
  try {
    cpuModel = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpuModel;
  } catch {
    // not Linux: leave it unknown
  }
  return {
    cores: availableParallelism(),
    cpuModel,
    node: process.version,
    memoryGiB: Math.round(totalmem() / 1024 ** 3),
    loadAverage1m: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}
