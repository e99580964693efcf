// `npm run cluster [-- --data DIR] [--port N]`: the service as a cluster on this machine, for a newcomer to try
// (docs/scaling.md): a nats-server on a free loopback port (Debian's: apt-get install nats-server), two shard
// nodes (partitions 0-127 and 128-255, each its own data directory under DIR), a coordinator (its own data
// directory, on --port + 2) and two gateways (keeping nothing: on --port and --port + 1, default 8080 and
// 8081), with one admin token for all. Prints the gateways' URLs and the token once everything listens, and
// stops them all on Ctrl-C (SIGINT) or SIGTERM. The data directory (default ./data-cluster) is kept between
// runs, as the service's ./data is.
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { ListeningProcess } from '../bench/micro/cluster-processes.js';
import { NatsServer, natsServerBinary } from '../test/helpers/nats-server.js';

const SHARD_NODE = fileURLToPath(new URL('../src/cluster/shard-node-main.js', import.meta.url));
const SERVICE = fileURLToPath(new URL('../src/main.js', import.meta.url));
const NODES = [
  { name: 'shard node a', partitions: '0-127' },
  { name: 'shard node b', partitions: '128-255' },
];
const MAP = NODES.map((node) => node.partitions).join(';');

const { values } = parseArgs({
  options: { data: { type: 'string', default: './data-cluster' }, port: { type: 'string', default: '8080' } },
});
const dataRoot = resolve(values.data);
const basePort = Number(values.port);
const gatewayPorts = [basePort, basePort + 1];
const binary = natsServerBinary();
if ('missing' in binary) {
  process.stderr.write(`npm run cluster: ${binary.missing}\n`);
  process.exit(2);
}

const adminToken = process.env['PARLAYD_ADMIN_TOKEN'] ?? randomBytes(24).toString('base64url');
const nats = await NatsServer.start(binary.path);
const started: ListeningProcess[] = [];
const stopAll = async () => {
  // The gateways and the coordinator first (they stop taking requests), then the nodes (their journals
  // flushed), then NATS.
  for (const process of [...started].reverse()) await process.stop();
  await nats.stop();
};
try {
  // Only the coordinator is given the partition map: the nodes and the gateways take it from there, and the
  // coordinator waits for the nodes, so they start together.
  const front = (role: 'coordinator' | 'gateway', nodeId: string, port: number) => ({
    PARLAYD_NATS_URL: nats.url,
    PARLAYD_ROLE: role,
    ...(role === 'coordinator' ? { PARLAYD_PARTITION_MAP: MAP } : {}),
    PARLAYD_NODE_ID: nodeId,
    PARLAYD_PORT: String(port),
    PARLAYD_DATA_DIR: resolve(dataRoot, nodeId),
    PARLAYD_ADMIN_TOKEN: adminToken,
    PARLAYD_LOG_LEVEL: 'info',
  });
  const first = await Promise.allSettled([
    ...NODES.map((node) =>
      ListeningProcess.start(node.name, SHARD_NODE, {
        PARLAYD_NATS_URL: nats.url,
        PARLAYD_PARTITIONS: node.partitions,
        PARLAYD_DATA_DIR: resolve(dataRoot, node.name.replaceAll(' ', '-')),
        PARLAYD_LOG_LEVEL: 'info',
      }),
    ),
    ListeningProcess.start('coordinator', SERVICE, front('coordinator', 'coordinator', basePort + 2)),
  ]);
  for (const outcome of first) if (outcome.status === 'fulfilled') started.push(outcome.value);
  const failed = first.find((outcome) => outcome.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  for (const [i, port] of gatewayPorts.entries()) {
    started.push(await ListeningProcess.start(`gateway ${i + 1}`, SERVICE, front('gateway', `gateway-${i + 1}`, port)));
  }
} catch (error) {
  await stopAll();
  throw error;
}

process.stdout.write(
  [
    `parlayd cluster: nats-server at ${nats.url}; ${NODES.map((node) => `${node.name} (partitions ${node.partitions})`).join(', ')}`,
    ...gatewayPorts.map((port, i) => `  gateway ${i + 1}: http://127.0.0.1:${port}  (maker socket ws://127.0.0.1:${port}/v1/mm/ws)`),
    `  coordinator: http://127.0.0.1:${basePort + 2}`,
    `  dashboard (the whole cluster's figures, on any of them): http://127.0.0.1:${basePort}/dashboard`,
    `  admin token: ${adminToken}`,
    `  data: ${dataRoot}`,
    '  Ctrl-C stops them all.',
    '',
  ].join('\n'),
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void stopAll().then(() => process.exit(0)));
}
