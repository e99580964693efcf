// Main thread. The parts of a running service, built once by app.ts and handed to route modules. Route
// modules take what they use from here; nothing else holds global state.
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import type { Config } from '../config/config.js';
import type { Store } from '../store/db.js';
import type { Sessions } from '../auth/sessions.js';
import type { WalletLogin } from '../auth/wallet-login.js';
import type { JwtLogin } from '../auth/jwt-login.js';
import type { Users } from '../users/users.js';
import type { Credits } from '../ledger/credits.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Withdrawals } from '../ledger/withdrawals.js';
import type { LedgerCheckRunner } from '../ledger/check-runner.js';
import type { BalanceOwners } from '../ledger/owners.js';
import type { PreferencesStore } from '../preferences/preferences.js';
import type { Markets } from '../markets/markets.js';
import type { Contests } from '../contests/contests.js';
import type { VerifyPool } from '../crypto/verify-pool.js';
import type { HttpMetrics } from '../ops/metrics.js';
import type { MakerRegistry } from '../mm/registry.js';
import type { MakerGateway } from '../mm/gateway.js';
import type { MakerDesk } from '../mm/desk.js';
import type { QuoteBook } from '../mm/quote-book.js';
import type { Protection } from '../mm/protection.js';
import type { MakerStats } from '../mm/stats.js';
import type { Oracle } from '../oracle/oracle.js';
import type { OwnedViews } from './owned-views.js';

export interface Services {
  config: Config;
  clock: Clock;
  log: Logger;
  store: Store;
  metrics: HttpMetrics;
  sessions: Sessions;
  walletLogin: WalletLogin;
  jwtLogin: JwtLogin;
  users: Users;
  credits: Credits;
  withdrawals: Withdrawals;
  /** The main thread's ledger: makers' and the protocol's money (ledger/ledger.ts NO_USERS). */
  ledger: Ledger;
  /** GET /v1/admin/ledger/check, on a worker thread, and its last result in /metrics (ledger/check-runner.ts). */
  ledgerCheck: LedgerCheckRunner;
  /** The owners of every user balance: the RFQ shards, through their pool (ledger/owners.ts). */
  balanceOwners: BalanceOwners;
  /** The views of what the owners hold, read where their records are (owned-views.ts). */
  ownedViews: OwnedViews;
  preferences: PreferencesStore;
  markets: Markets;
  /** The contest actor (contests/contests.ts). */
  contests: Contests;
  verifyPool: VerifyPool;
  /** Registered market makers (contract section 7). */
  makers: MakerRegistry;
  /** The maker socket: handshake, heartbeat, fan-out (mm/gateway.ts). */
  makerGateway: MakerGateway;
  /** The makers' quote books, protection and stats, in front of the RFQ engine (mm/desk.ts). */
  makerDesk: MakerDesk;
  quoteBook: QuoteBook;
  makerProtection: Protection;
  makerStats: MakerStats;
  /** Price reports, window resolution and the auto-void sweep (oracle/oracle.ts; contract section 12). */
  oracle: Oracle;
}
