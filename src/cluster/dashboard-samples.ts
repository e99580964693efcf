// A cluster's front process (the coordinator or a gateway). The operator's dashboard shows the cluster, not
// the process the page happens to be on: every front process answers a reading of its registry on one
// subject, and the one whose page is watched asks them all once a second (only while someone watches) and
// adds up what came (dashboard/sample.ts mergeSamples). Gateways hold the RFQ path's and makers' figures, the
// coordinator those of markets, contests and the ledger. Shard nodes have no registry to read.
import { RequestStrategy, type NatsConnection } from 'nats';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { takeSample, type Sample, type SampleSource, type SamplesOf, type SeriesValue } from '../dashboard/sample.js';
import { decode, encode, subjects } from './wire.js';

/** The answers are awaited this long at most, and past the last one this long for another. */
const MAX_WAIT_MS = 500;
const QUIET_AFTER_LAST_MS = 100;

/** A reading as it crosses NATS: the process's name, and its metrics as entries (msgpack keeps no Map). */
interface SampleAnswer {
  process: string;
  atMs: number;
  metrics: Array<[string, readonly SeriesValue[]]>;
}

/** Readings of this process's registry (named `process`: its PARLAYD_NODE_ID) and of every other front's. */
export function clusterDashboardSamples(nc: NatsConnection, process: string, log: Logger): SamplesOf {
  return (registry: Registry): SampleSource => {
    const answering = nc.subscribe(subjects.dashboardSample, {
      callback: (error, msg) => {
        if (error !== null) return;
        takeSample(registry, Date.now())
          .then((sample) => msg.respond(encode({ process, atMs: sample.atMs, metrics: [...sample.metrics] } satisfies SampleAnswer)))
          // A collect hook that throws is its owner's bug (or the connection closed under the answer): the
          // asker goes without this process for the tick.
          .catch((err: unknown) => log.error({ err }, 'dashboard sample not answered'));
      },
    });
    return {
      async take(atMs) {
        const samples = new Map<string, Sample>([[process, await takeSample(registry, atMs)]]);
        try {
          const answers = await nc.requestMany(subjects.dashboardSample, new Uint8Array(0), {
            strategy: RequestStrategy.JitterTimer,
            maxWait: MAX_WAIT_MS,
            jitter: QUIET_AFTER_LAST_MS,
          });
          for await (const msg of answers) {
            const answer = decode<SampleAnswer>(msg.data);
            if (answer.process !== process) samples.set(answer.process, { atMs: answer.atMs, metrics: new Map(answer.metrics) });
          }
        } catch {
          // No other front answered (or NATS is away): this process's figures alone, as the frame's count says.
        }
        return samples;
      },
      close: () => answering.unsubscribe(),
    };
  };
}
