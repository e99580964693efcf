// Main thread. RFQ metrics: RFQs by terminal status, stage latencies, shard queue depth and the
// verify pool's use. Stage timings measured inside a shard travel back in its events. Per maker (the
// dashboard reads them from this registry): quotes, last-look answers and fills, labelled by the maker's
// address, which is bounded by the registry (MAX_MAKERS) because only authenticated makers reach them.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { LATENCY_BUCKETS_S } from '../ops/metrics.js';

export interface RfqMetrics {
  createdTotal: Counter<'kind'>;
  terminalTotal: Counter<'status' | 'error'>;
  admissionSeconds: Histogram;
  verifySeconds: Histogram;
  persistSeconds: Histogram;
  endToEndSeconds: Histogram;
  fanoutSeconds: Histogram;
  quotingSeconds: Histogram;
  selectionSeconds: Histogram;
  quotesPerRfq: Histogram;
  shardCommitsTotal: Counter;
  shardCommitTransactionsTotal: Counter;
  makerQuotesTotal: Counter<'maker'>;
  makerLastLookTotal: Counter<'maker' | 'answer'>;
  makerFillsTotal: Counter<'maker'>;
}

/** Quotes an RFQ received: small counts (a handful of makers), so whole-number buckets up to a crowd. */
const QUOTES_PER_RFQ_BUCKETS = [0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 50];

export function createRfqMetrics(
  registry: Registry,
  gauges: {
    activeRfqs: () => number;
    outstandingCalls: () => number;
    /** The same, per shard (index = shard number). */
    outstandingCallsByShard: () => readonly number[];
    unclaimedResults: () => number;
    waiters: () => number;
    verifyUtilization: () => number;
    verifyQueue: () => number;
  },
): RfqMetrics {
  const histogram = (name: string, help: string) => new Histogram({ name, help, buckets: LATENCY_BUCKETS_S, registers: [registry] });
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  gauge('parlayd_rfq_active', 'RFQs active in shard actors (as last reported by the shards)', gauges.activeRfqs);
  gauge('parlayd_rfq_shard_queue_depth', 'Calls sent to shards and not yet answered', gauges.outstandingCalls);
  new Gauge({
    name: 'parlayd_rfq_shard_calls_outstanding',
    help: 'Calls sent to one shard and not yet answered, by shard',
    labelNames: ['shard'],
    registers: [registry],
    collect() {
      gauges.outstandingCallsByShard().forEach((depth, shard) => this.set({ shard: String(shard) }, depth));
    },
  });
  gauge(
    'parlayd_rfq_unclaimed_results',
    'Terminal results held for a create answer that waits for them (wait_ms)',
    gauges.unclaimedResults,
  );
  gauge('parlayd_rfq_waiters', 'Requests held open by wait_ms, and places taken for requests about to wait', gauges.waiters);
  gauge('parlayd_verify_pool_utilization', 'Signature-recovery pool utilization (0..1)', gauges.verifyUtilization);
  gauge('parlayd_verify_pool_queue', 'Recoveries waiting for a pool thread', gauges.verifyQueue);
  return {
    createdTotal: new Counter({ name: 'parlayd_rfq_created_total', help: 'RFQs accepted', labelNames: ['kind'], registers: [registry] }),
    terminalTotal: new Counter({
      name: 'parlayd_rfq_terminal_total',
      help: 'RFQs that reached a terminal status, by status and error',
      labelNames: ['status', 'error'],
      registers: [registry],
    }),
    admissionSeconds: histogram('parlayd_rfq_admission_seconds', 'Admission checks on the main thread (schema to shard call)'),
    verifySeconds: histogram('parlayd_rfq_verify_seconds', 'Signature recovery on the verify pool, round trip'),
    persistSeconds: histogram('parlayd_rfq_persist_seconds', 'Durable LMDB writes of RFQ creation and terminal results'),
    endToEndSeconds: histogram(
      'parlayd_rfq_end_to_end_seconds',
      'RFQ creation (its created_at) to its durable terminal result reaching the HTTP side; millisecond resolution',
    ),
    fanoutSeconds: histogram('parlayd_rfq_fanout_seconds', 'Broadcasting a new RFQ to the connected makers'),
    quotingSeconds: histogram(
      'parlayd_rfq_quoting_seconds',
      'Quoting, timed in the shard: from its rfq frame leaving for the makers to the close of quoting (every maker answered, or the window ended)',
    ),
    selectionSeconds: histogram('parlayd_rfq_selection_seconds', 'Quote selection (matching) in the shard'),
    quotesPerRfq: new Histogram({
      name: 'parlayd_rfq_quotes_per_rfq',
      help: 'Quotes an RFQ had received when it reached its terminal status',
      buckets: QUOTES_PER_RFQ_BUCKETS,
      registers: [registry],
    }),
    shardCommitsTotal: new Counter({
      name: 'parlayd_rfq_shard_commits_total',
      help: "The RFQ shards' group commits: one LMDB commit, so one pair of flushes, each (reported every second)",
      registers: [registry],
    }),
    shardCommitTransactionsTotal: new Counter({
      name: 'parlayd_rfq_shard_commit_transactions_total',
      help: 'The durable writes (transactions) those commits held: divided by the commits, the mean group size',
      registers: [registry],
    }),
    makerQuotesTotal: new Counter({
      name: 'parlayd_mm_quotes_total',
      help: 'Quotes received, by maker address',
      labelNames: ['maker'],
      registers: [registry],
    }),
    makerLastLookTotal: new Counter({
      name: 'parlayd_mm_last_look_total',
      help: 'Last-look answers, by maker address and answer (accepted, rejected); silence is not counted',
      labelNames: ['maker', 'answer'],
      registers: [registry],
    }),
    makerFillsTotal: new Counter({
      name: 'parlayd_mm_fills_total',
      help: 'RFQs filled, by the filling maker address',
      labelNames: ['maker'],
      registers: [registry],
    }),
  };
}
