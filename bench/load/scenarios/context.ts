// Load generator, main thread. What every scenario receives: the run's mode, where to start servers, a
// logger, and the results of scenarios already run in this invocation (the denominators of its ratios).
import { startParlayd, type BenchServer, type StartOptions } from '../server.js';

export interface RunContext {
  isQuick: boolean;
  runId: string;
  /** Node flags for every parlayd child (e.g. --cpu-prof): profiling a scenario on the real server. */
  serverNodeArgs: string[];
  /** Results of this run so far, by scenario name. */
  results: Map<string, unknown>;
  log(message: string): void;
}

export interface Scenario<T> {
  name: string;
  describe: string;
  /** Run only when named (it needs settings of its own): not part of a run of every scenario. */
  isOptIn?: boolean;
  run(ctx: RunContext): Promise<T>;
}

export function startServerFor(ctx: RunContext, env: Record<string, string> = {}, script?: string): Promise<BenchServer> {
  const options: StartOptions = { env };
  if (script !== undefined) options.script = script;
  if (ctx.serverNodeArgs.length > 0) options.nodeArgs = ctx.serverNodeArgs;
  return startParlayd(options);
}

/** Seconds of a measured step: short in --quick mode, where only the tool is being checked. */
export const stepMs = (ctx: RunContext, fullMs: number, quickMs = Math.min(1000, fullMs)) => (ctx.isQuick ? quickMs : fullMs);

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
