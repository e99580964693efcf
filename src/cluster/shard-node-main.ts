// Process entry: a shard node (docs/scaling.md): one worker thread per owner of its partitions
// (shard-node-worker.ts), each the owner's RFQ shard and money, with its journal, snapshots and LMDB read
// model under the node's data directory. The RFQ settings are the service's variables (config.ts). Configured by the environment, checked with one line at start:
//   PARLAYD_NATS_URL            the NATS server(s), comma-separated
//   PARLAYD_PARTITIONS          this node's partitions (`0-127`): whole owners of the map, which it runs
//   PARLAYD_PARTITION_MAP       optional: every owner's partitions, separated by ';' (`0-63;64-127;128-255`).
//                               Unset, the node waits for the coordinator's (map-source.ts); set, it must be
//                               the coordinator's (exit 2 if not), checked before its owners start when a
//                               coordinator answers, else once one does
//   PARLAYD_DATA_DIR            its owners' directories (its own, never another node's)
//   PARLAYD_SNAPSHOT_EVERY_RECORDS, PARLAYD_LOG_LEVEL
// Logs `listening` once every owner takes calls; stops on SIGTERM or SIGINT once what they decided is durable.
// An owner's thread that fails stops the node (exit 70): its partitions are refused at once ("no responders")
// until it is started again and has replayed its journals.
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { createLogger } from '../lib/log.js';
import { loadConfig } from '../config/config.js';
import { connect } from 'nats';
import { STOP, type OwnerWorkerInit, type OwnerWorkerReport, type RfqSettings } from './shard-node-messages.js';
import { askPartitionMap, askPartitionMapOnce, mapMismatch } from './map-source.js';
import { natsOptions } from './nats-options.js';
import { peerPortsOf } from '../engine/peer-links.js';
import { PartitionMap, parsePartitions } from './partitions.js';

const Env = Type.Object({
  PARLAYD_NATS_URL: Type.String({ minLength: 1 }),
  PARLAYD_PARTITIONS: Type.String({ minLength: 1 }),
  PARLAYD_PARTITION_MAP: Type.Optional(Type.String({ minLength: 1 })),
  PARLAYD_DATA_DIR: Type.String({ minLength: 1 }),
  PARLAYD_SNAPSHOT_EVERY_RECORDS: Type.Integer({ minimum: 1, default: 50_000 }),
  PARLAYD_LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
});

function configError(message: string): never {
  process.stderr.write(`parlayd owner node: configuration error: ${message}\n`);
  process.exit(2);
}

const names = Object.keys(Env.properties);
const raw = Object.fromEntries(names.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]]])));
const env = Value.Convert(Env, Value.Default(Env, raw));
if (!Value.Check(Env, env)) {
  const first = Value.Errors(Env, env).First()!;
  configError(`${first.path.slice(1)}: ${first.message}`);
}
// The RFQ shards' settings are the service's, read as the service reads them (the same variables).
let rfq: RfqSettings;
try {
  const config = loadConfig();
  rfq = {
    quoteWindowMs: config.quoteWindowMs,
    lastLookMs: config.lastLookMs,
    maxFinalizingMs: config.maxFinalizingMs,
    maxActiveRfqs: config.maxActiveRfqsPerShard,
    createCoalesceMs: config.createCoalesceMs,
  };
} catch (error) {
  configError((error as Error).message);
}

const log = createLogger(env.PARLAYD_LOG_LEVEL);
const natsServers = env.PARLAYD_NATS_URL.split(',');
const mapText = await partitionMap(env.PARLAYD_PARTITION_MAP?.split(';') ?? null, `node-${env.PARLAYD_PARTITIONS}`);
let owners: number[];
try {
  const map = PartitionMap.of(mapText);
  const partitions = parsePartitions(env.PARLAYD_PARTITIONS);
  owners = map.owners.filter((owner) => map.partitionsOf(owner).every((p) => partitions.includes(p)));
  if (owners.flatMap((owner) => map.partitionsOf(owner)).length !== partitions.length) {
    configError(`PARLAYD_PARTITIONS ${env.PARLAYD_PARTITIONS} splits an owner of the partition map: a node runs whole owners`);
  }
} catch (error) {
  configError((error as Error).message);
}

/**
 * With none given, the coordinator's, waited for. A map given is checked against the coordinator's before any
 * owner starts when a coordinator answers; when none does yet (a coordinator starts after its nodes, and waits
 * for them), the node starts on it and checks it once the coordinator answers.
 */
async function partitionMap(given: string[] | null, name: string): Promise<string[]> {
  const nc = await connect({ servers: natsServers, ...natsOptions(name) });
  if (given === null) return askPartitionMap(nc, log).finally(() => void nc.drain());
  const check = (coordinators: string[]) => {
    const mismatch = mapMismatch(given, coordinators);
    if (mismatch !== null) configError(mismatch);
  };
  const answered = await askPartitionMapOnce(nc);
  if (answered === null) {
    void askPartitionMap(nc, null)
      .then(check)
      .finally(() => void nc.drain());
  } else {
    void nc.drain();
    check(answered);
  }
  return given;
}

let isStopping = false;
// The node's owners talk to each other by the ports between their threads, and to other nodes' over NATS.
const ports = peerPortsOf(owners);
const workers = owners.map((owner) => {
  const peerPorts = ports.get(owner) ?? new Map();
  const init: OwnerWorkerInit = {
    natsServers,
    dataDir: env.PARLAYD_DATA_DIR,
    owner,
    map: mapText,
    peerPorts,
    snapshotEveryRecords: env.PARLAYD_SNAPSHOT_EVERY_RECORDS,
    logLevel: env.PARLAYD_LOG_LEVEL,
    rfq,
  };
  const worker = new Worker(new URL('./shard-node-worker.js', import.meta.url), {
    workerData: init,
    transferList: [...peerPorts.values()],
  });
  const fail = (detail: object) => {
    if (isStopping) return;
    log.fatal({ owner, ...detail }, "an owner's thread ended: the node stops");
    process.exit(70);
  };
  worker.on('error', (err) => fail({ err }));
  worker.on('exit', (exitCode) => fail({ exitCode }));
  return worker;
});
const reports = await Promise.all(workers.map(async (worker) => (await once(worker, 'message'))[0] as OwnerWorkerReport));
log.info({ owners, partitions: env.PARLAYD_PARTITIONS, recovery: reports, dataDir: env.PARLAYD_DATA_DIR }, 'listening');

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    isStopping = true;
    void Promise.all(
      workers.map(async (worker) => {
        worker.postMessage(STOP);
        await once(worker, 'message'); // stopped: its journal durable, its read model committed
      }),
    ).then(() => process.exit(0));
  });
}
