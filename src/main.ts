// Main thread: the process entry point. Reads configuration, starts the service, prints where it listens
// (and the admin token once, when it was generated), and stops gracefully on SIGTERM/SIGINT.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { systemClock } from './lib/clock.js';
import { createLogger } from './lib/log.js';
import { UnsupportedDataError } from './store/db.js';
import { readOpenFilesLimit } from './ops/open-files.js';

// Listened for first, before the service's modules load (~0.15 s here: uWS, lmdb, piscina; app.js is
// imported below, once this runs): a SIGTERM or SIGINT at any point of start-up stops the service as soon
// as it has started (exit 0) instead of killing the process half-started, and one sent the moment
// 'listening' is read is never missed.
const stopSignal = new Promise<string>((resolve) => {
  process.once('SIGTERM', () => resolve('SIGTERM'));
  process.once('SIGINT', () => resolve('SIGINT'));
});

/**
 * A bad configuration value (found while parsing, or while opening what it names), or a data directory this
 * version cannot read, stops with one line.
 */
function exitOnConfigError(err: unknown): never {
  if (err instanceof ConfigError) {
    process.stderr.write(`parlayd: configuration error: ${err.message}\n`);
    process.exit(2);
  }
  if (err instanceof UnsupportedDataError) {
    process.stderr.write(`parlayd: data directory error: ${err.message}\n`);
    process.exit(2);
  }
  throw err;
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    exitOnConfigError(err);
  }
  // A cluster's shard node (docs/scaling.md) is a process of its own kind: its entry reads its variables.
  if (config.cluster?.role === 'shard') return void (await import('./cluster/shard-node-main.js'));
  const log = createLogger(config.logLevel);
  const service = await startRole(config, log).catch(exitOnConfigError);
  log.info(
    {
      host: config.host,
      port: service.port,
      metricsPort: service.metricsPort,
      dataDir: config.dataDir,
      recoverBackend: service.recoverBackend,
      // One per connection: what bounds the connections this process can hold (docs/reliability.md, "Connections").
      openFilesLimit: readOpenFilesLimit(),
      ...(config.cluster === null ? {} : { role: config.cluster.role, nodeId: config.cluster.nodeId }),
    },
    'listening',
  );
  if (config.isAdminTokenGenerated) {
    // Printed once, to the terminal only (stderr, outside the structured log), so log shipping never carries it.
    process.stderr.write(`parlayd: generated admin token (set PARLAYD_ADMIN_TOKEN to choose one): ${config.adminToken}\n`);
  }
  const signal = await stopSignal;
  log.info({ signal }, 'stopping');
  service.close().then(
    () => process.exit(0),
    (err: unknown) => {
      log.error({ err }, 'error while stopping');
      process.exit(1);
    },
  );
}

interface Running {
  port: number;
  metricsPort: number | null;
  recoverBackend: 'native' | 'noble';
  close(): Promise<void>;
}

/**
 * The one process, or a cluster's coordinator or gateway (docs/scaling.md, "Roles"). Both reach their RFQ
 * shards on the shard nodes over NATS (loaded only then); a gateway also reaches the coordinator, which
 * answers it through a door of its own once it listens.
 */
async function startRole(config: Config, log: Logger): Promise<Running> {
  // A failed RFQ shard lost its state: the process stops at once (70: an internal software error), and the
  // next start ends the RFQs it held.
  const onShardFailed = () => process.exit(70);
  if (config.cluster === null) return (await import('./boot/app.js')).createService(config, log, systemClock, { onShardFailed });
  const cluster = await import('./cluster/gateway.js');
  const nc = await cluster.connectToCluster(config.cluster);
  const closeLink = (running: Running): Running => ({ ...running, close: () => running.close().then(() => nc.drain()) });
  if (config.cluster.role === 'gateway') {
    const { CoordinatorLink } = await import('./cluster/coordinator-link.js');
    const coordinator = new CoordinatorLink({ nc, adminToken: config.adminToken, clock: systemClock, log });
    const map = await cluster.askPartitionMap(nc, log);
    const mismatch = config.cluster.partitionMap === null ? null : cluster.mapMismatch(config.cluster.partitionMap, map);
    if (mismatch !== null) throw new ConfigError(mismatch);
    // Its ledger check is the coordinator's (the admin route is forwarded).
    const { transport, placement, areShardsRemote } = cluster.joinAsGateway(nc, config.cluster, map, log);
    const { createGatewayService } = await import('./boot/gateway-app.js');
    const dashboardSamples = cluster.clusterDashboardSamples(nc, config.cluster.nodeId, log);
    const options = { onShardFailed, transport, placement, areShardsRemote, coordinator, dashboardSamples };
    return closeLink(await createGatewayService(config, log, systemClock, options));
  }
  const partitionMap = config.cluster.partitionMap ?? cluster.ONE_OWNER_MAP;
  const { checkLedger, ...shardOptions } = cluster.joinAsGateway(nc, config.cluster, partitionMap, log);
  // Answered before the service starts: its shard pool waits for the shard nodes, which may wait for the map.
  const mapSource = cluster.servePartitionMap(nc, partitionMap);
  const forwardedKey = randomBytes(32).toString('base64url');
  const service = await (
    await import('./boot/app.js')
  ).createService(config, log, systemClock, {
    onShardFailed,
    ...shardOptions,
    checkLedger,
    forwardedKey,
    dashboardSamples: cluster.clusterDashboardSamples(nc, config.cluster.nodeId, log),
  });
  const { CoordinatorDoor } = await import('./cluster/coordinator-door.js');
  const loopback = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const door = new CoordinatorDoor({
    nc,
    services: service.services,
    httpOrigin: `http://${loopback.includes(':') ? `[${loopback}]` : loopback}:${service.port}`,
    forwardedKey,
    log,
  });
  return closeLink({ ...service, close: () => (door.close(), mapSource.unsubscribe(), service.close()) });
}

void main();
