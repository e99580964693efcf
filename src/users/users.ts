// Main thread. Users are created by their first login (or first admin credit) and keyed by a UUID; the wallet
// index makes "the user of this wallet" one LMDB read (contract section 3).
import { randomUUID } from 'node:crypto';
import type { Clock } from '../lib/clock.js';
import type { Store } from '../store/db.js';
import { table } from '../store/records.js';
import type { UserRecord } from '../records/users.js';

export class Users {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  private get users() {
    return table(this.store, 'users');
  }
  private get byWallet() {
    return table(this.store, 'usersByWallet');
  }

  get(userId: string): UserRecord | undefined {
    return this.users.get(userId);
  }

  findByWallet(wallet: string): UserRecord | undefined {
    const userId = this.byWallet.get(wallet);
    return userId === undefined ? undefined : this.users.get(userId);
  }

  /** Inside a write transaction: the user of `wallet`, created if new. */
  ensureInTxn(wallet: string): UserRecord {
    const existing = this.findByWallet(wallet);
    if (existing !== undefined) return existing;
    const user: UserRecord = { userId: randomUUID(), wallet, tier: 0, createdAtMs: this.clock.nowMs() };
    void this.users.put(user.userId, user);
    void this.byWallet.put(wallet, user.userId);
    return user;
  }

  /** Durable before it resolves. */
  ensure(wallet: string): Promise<UserRecord> {
    const existing = this.findByWallet(wallet);
    if (existing !== undefined) return Promise.resolve(existing);
    // A user is kept for ever, and any new wallet makes one: new work, refused past the store's room.
    this.store.assertRoom();
    return this.store.transact(() => this.ensureInTxn(wallet));
  }
}
