// Process entry: a shard node's money alone (owner-node.ts), the part of the cluster's shard role that is
// built (docs/scaling.md, "What is built"). Configured by the environment, checked with one line at start:
//   PARLAYD_NATS_URL            the NATS server(s), comma-separated
//   PARLAYD_PARTITIONS          this node's partitions (`0-127`); its owner is named by the first
//   PARLAYD_PARTITION_MAP       every owner's partitions, separated by ';' (`0-127;128-255`): the cluster's
//   PARLAYD_DATA_DIR            its journal, snapshots and LMDB read model (its own, never another node's)
//   PARLAYD_SNAPSHOT_EVERY_RECORDS, PARLAYD_LOG_LEVEL
// Logs `listening` once it takes calls; stops on SIGTERM or SIGINT once what it decided is durable.
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { connect } from 'nats';
import { createLogger } from '../lib/log.js';
import { OwnerNode } from './owner-node.js';
import { PartitionMap, parsePartitions } from './partitions.js';
import { natsOptions } from './nats-options.js';

const Env = Type.Object({
  PARLAYD_NATS_URL: Type.String({ minLength: 1 }),
  PARLAYD_PARTITIONS: Type.String({ minLength: 1 }),
  PARLAYD_PARTITION_MAP: Type.String({ minLength: 1 }),
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
let map: PartitionMap;
let owner: number;
try {
  map = PartitionMap.of(env.PARLAYD_PARTITION_MAP.split(';'));
  const partitions = parsePartitions(env.PARLAYD_PARTITIONS);
  owner = partitions[0]!;
  if (map.partitionsOf(owner).join() !== partitions.join()) {
    configError(`PARLAYD_PARTITIONS ${env.PARLAYD_PARTITIONS} is not one owner's partitions in PARLAYD_PARTITION_MAP`);
  }
} catch (error) {
  configError((error as Error).message);
}

const log = createLogger(env.PARLAYD_LOG_LEVEL);
const nc = await connect({ servers: env.PARLAYD_NATS_URL.split(','), ...natsOptions(`owner-${owner}`) });
const node = new OwnerNode({
  nc,
  dataDir: env.PARLAYD_DATA_DIR,
  owner,
  map,
  limits: { lockTimeoutMs: 2_000, lockQueryMs: 2_000, resendMs: 100, resendPerTick: 256 },
  tickMs: 20,
  snapshotEveryRecords: env.PARLAYD_SNAPSHOT_EVERY_RECORDS,
  maxPendingBytes: 2 << 20,
  log,
  nowMs: () => Date.now(),
  onFailure: (error) => {
    log.fatal({ err: error }, 'the owner failed: stopping');
    process.exit(70);
  },
});
await nc.flush(); // its subscriptions are on the server: calls reach it from here on
log.info({ owner, partitions: env.PARLAYD_PARTITIONS, recovery: node.recovery, dataDir: env.PARLAYD_DATA_DIR }, 'listening');

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void node
      .close()
      .then(() => nc.drain())
      .then(() => process.exit(0));
  });
}
