// Owner nodes (src/cluster/shard-node-main.ts) as real processes on a real nats-server, for the cluster's
// tests and the chaos script's cluster mode: node a holds partitions 0-127 as two owners on two threads
// (0-63 and 64-127: owners 0 and 64), node b partitions 128-255 as one (owner 128), each on a data directory
// of its own that outlives its process; started, killed with SIGKILL, restarted, stopped with SIGTERM. Then
// looks at the owners' books, the wait until all are quiet, the cluster's ledger check through NATS, and
// every owner's journal read back and checked together once the nodes stopped.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { NatsConnection } from 'nats';
import { checkCluster } from '../../src/cluster/ledger-check.js';
import type { BookLook } from '../../src/cluster/owner-node.js';
import { PartitionMap, partitionOfName, partitionOfUser } from '../../src/cluster/partitions.js';
import { decode, encode, subjects } from '../../src/cluster/wire.js';
import { checkOwners, type LedgerCheck } from '../../src/engine/check.js';
import { makerAccount } from '../../src/records/ledger.js';
import { readOwnerJournal } from './owner-journals.js';
import { waitFor } from './wait.js';

const OWNER_NODE = new URL('../../src/cluster/shard-node-main.js', import.meta.url).pathname;
export const MAP_TEXT = ['0-63', '64-127', '128-255'];
export const MAP = PartitionMap.of(MAP_TEXT);
/** The first owner of each node: users and makers `userOn(A)` live on node a, `userOn(B)` on node b. */
export const [A, A2, B] = MAP.owners as [number, number, number];
export const NODES = [
  { name: 'node a', partitions: '0-127', owners: [A, A2] },
  { name: 'node b', partitions: '128-255', owners: [B] },
] as const;

/** One node's process: started, killed with SIGKILL or stopped with SIGTERM, on the same data directory. */
export class NodeProcess {
  #child: ChildProcess | null = null;

  constructor(
    readonly node: (typeof NODES)[number],
    readonly dataDir: string,
    private readonly natsUrl: string,
    /** More of the service's variables (the RFQ shards' settings: PARLAYD_QUOTE_WINDOW_MS...). */
    private readonly env: Record<string, string> = {},
    /** The partition map it is given; null: it takes the coordinator's (and waits for it). */
    private readonly map: string | null = MAP_TEXT.join(';'),
  ) {}

  get owners(): readonly number[] {
    return this.node.owners;
  }

  journalDir(owner: number): string {
    return join(this.dataDir, 'engine', `owner-${owner}`);
  }

  async start(): Promise<void> {
    const child = spawn(process.execPath, [OWNER_NODE], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: {
        ...process.env,
        PARLAYD_NATS_URL: this.natsUrl,
        PARLAYD_PARTITIONS: this.node.partitions,
        ...(this.map === null ? {} : { PARLAYD_PARTITION_MAP: this.map }),
        PARLAYD_DATA_DIR: this.dataDir,
        PARLAYD_SNAPSHOT_EVERY_RECORDS: String(1e9), // the ledger check of the journals reads every record since the first
        PARLAYD_LOG_LEVEL: 'info',
        ...this.env,
      },
    });
    this.#child = child;
    const lines = createInterface({ input: child.stdout! });
    const exited = once(child, 'exit').then(([code]) => {
      throw new Error(`${this.node.name} exited (${code}) before it listened`);
    });
    const listening = (async () => {
      for await (const line of lines) if ((JSON.parse(line) as { msg?: string }).msg === 'listening') return;
    })();
    await Promise.race([listening, exited]);
    child.stdout!.resume();
  }

  async kill(): Promise<void> {
    const child = this.#child;
    this.#child = null;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await once(child, 'exit');
  }

  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = null;
    if (child === null || child.exitCode !== null) return;
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0, `${this.node.name} stopped cleanly`);
  }
}

/** The first name `make(i)` whose partition lies with `owner`. */
function nameOn(owner: number, make: (i: number) => string, partitionOf: (name: string) => number): string {
  for (let i = 0; ; i++) if (MAP.ownerOfPartition(partitionOf(make(i))) === owner) return make(i);
}
export const userOn = (owner: number, tag: string) => nameOn(owner, (i) => `${tag}-${i}`, partitionOfUser);
export const makerOn = (owner: number, from = 0) =>
  nameOn(
    owner,
    (i) => `0x${(from + i).toString(16).padStart(40, '0')}`,
    (address) => partitionOfName(makerAccount(address)),
  );

export const look = async (nc: NatsConnection, owner: number): Promise<BookLook> =>
  decode<BookLook>((await nc.request(subjects.ownerBook(owner), encode(null), { timeout: 2_000 })).data);

/** Every owner with nothing on a channel, no fill waiting for a lock and no lock pending. */
export const waitForQuiet = (nc: NatsConnection, timeoutMs = 15_000) =>
  waitFor(
    async () => {
      for (const owner of MAP.owners) {
        const book = await look(nc, owner);
        assert.equal(book.unacknowledged, 0, `owner ${owner}: commands unacknowledged`);
        assert.equal(book.fillsInFlight, 0, `owner ${owner}: fills waiting`);
        const pending = Object.keys(book.holds).filter((ref) => book.holds[ref]!.isPending);
        assert.deepEqual(pending, [], `owner ${owner}: locks pending`);
      }
    },
    { what: 'every owner quiet', timeoutMs, intervalMs: 50 },
  );

/** The cluster's ledger check through NATS, which must be clean with nothing in transit (every owner quiet). */
export async function assertClusterCheckClean(nc: NatsConnection): Promise<void> {
  const live = await checkCluster(nc, MAP.owners, 2_000);
  assert.deepEqual(
    live.owners.map(({ owner, check }) => ({ owner, differences: check.differences })),
    MAP.owners.map((owner) => ({ owner, differences: [] })),
  );
  assert.equal(live.ok, true, 'the cluster ledger check through NATS: each node clean, conserved in sum');
  assert.equal(live.inTransitMicros, 0n);
}

/** Every owner's journal of stopped nodes, checked together (engine/check.ts): must be clean with nothing in transit. */
export function assertJournalsClean(nodes: readonly NodeProcess[]): LedgerCheck {
  const check = checkOwners(
    nodes.flatMap((node) => node.owners.map((owner) => readOwnerJournal(node.journalDir(owner), owner, MAP.ownerOf))),
  );
  assert.deepEqual(check.differences, []);
  assert.equal(check.inTransitMicros, 0n);
  assert.equal(check.totalMicros, check.worldInMicros - check.worldOutMicros, 'conserved to the micro');
  return check;
}
