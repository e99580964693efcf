// Main thread: the process entry point. Reads configuration, starts the service, prints where it listens
// (and the admin token once, when it was generated), and stops gracefully on SIGTERM/SIGINT.
import { ConfigError, loadConfig } from './config/config.js';
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
  // A cluster's gateway reaches its RFQ shards on the shard nodes over NATS (loaded only then).
  const gateway = config.cluster === null ? null : await (await import('./cluster/gateway.js')).joinAsGateway(config.cluster, log);
  const { createService } = await import('./boot/app.js');
  // A failed RFQ shard lost its state: the process stops at once (70: an internal software error), and the
  // next start ends the RFQs it held.
  const service = await createService(config, log, systemClock, {
    onShardFailed: () => process.exit(70),
    ...gateway?.serviceOptions,
  }).catch(exitOnConfigError);
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
  service
    .close()
    .then(() => gateway?.close())
    .then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'error while stopping');
        process.exit(1);
      },
    );
}

void main();
