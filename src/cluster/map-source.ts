// Any process of a cluster. The partition map (partitions.ts) is the coordinator's: it answers it on a subject
// of its own from before its service starts (its shard pool waits for the shard nodes, and a node given no map
// waits for this answer), and gateways and shard nodes take it from there. A process given a map of its own
// (PARLAYD_PARTITION_MAP) must hold the coordinator's: money is routed to where the map says a balance lives,
// so two maps would move it where its owner is not.
import type { NatsConnection, Subscription } from 'nats';
import type { Logger } from 'pino';
import { decode, encode, subjects } from './wire.js';

/** How often a process that waits for the map asks again, and how long one ask may take. */
const ASK_EVERY_MS = 250;
const ASK_TIMEOUT_MS = 2_000;

/** The coordinator's side: answers every ask with `map` until the subscription is ended. */
export function servePartitionMap(nc: NatsConnection, map: readonly string[]): Subscription {
  const answer = encode(map);
  return nc.subscribe(subjects.coordinatorMap, { callback: (error, msg) => error === null && void msg.respond(answer) });
}

/** The coordinator's map, or null when no coordinator answers now (none listening, or none in time). */
export async function askPartitionMapOnce(nc: NatsConnection): Promise<string[] | null> {
  try {
    return decode<string[]>((await nc.request(subjects.coordinatorMap, new Uint8Array(0), { timeout: ASK_TIMEOUT_MS })).data);
  } catch {
    return null;
  }
}

/** The coordinator's map, asked until it answers (saying once on `log`, if given, that it waits). */
export async function askPartitionMap(nc: NatsConnection, log: Logger | null): Promise<string[]> {
  for (let isFirst = true; ; isFirst = false) {
    const map = await askPartitionMapOnce(nc);
    if (map !== null) return map;
    if (isFirst) log?.info('waiting for the coordinator: the partition map is its');
    await new Promise((resolve) => setTimeout(resolve, ASK_EVERY_MS));
  }
}

/** Why a map given to a process is not the coordinator's (one line), or null when it is. */
export function mapMismatch(given: readonly string[], coordinators: readonly string[]): string | null {
  return given.join(';') === coordinators.join(';')
    ? null
    : `PARLAYD_PARTITION_MAP ${given.join(';')} is not the coordinator's (${coordinators.join(';')}): leave it unset to take the coordinator's`;
}
