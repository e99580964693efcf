// Main thread. Per-user preferences (contract section 9). RFQ creation snapshots quote_tolerance and
// anonymous_mode_enabled, so a change applies to RFQs created after it and never to one in flight.
import type { Store } from '../store/db.js';
import type { Preferences, PreferencesPatch, QuoteTolerance } from '../contract/preferences.js';
import { table } from '../store/records.js';

export const DEFAULT_PREFERENCES: Readonly<Preferences> = {
  notifications_enabled: true,
  quote_tolerance: 'normal',
  anonymous_mode_enabled: false,
};

/** Contract section 6: how far below min_odds an unsigned RFQ still fills, in basis points. */
export const TOLERANCE_BPS: Readonly<Record<QuoteTolerance, number>> = { strict: 0, normal: 50, lenient: 200 };

export class PreferencesStore {
  /** Told of each user's preferences once an update of them is durable. */
  onUpdated: ((userId: string, preferences: Preferences) => void) | null = null;

  constructor(private readonly store: Store) {}

  private get db() {
    return table(this.store, 'preferences');
  }

  /** A fresh object (callers may change it). Read on every RFQ: built field by field, see admission.ts. */
  get(userId: string): Preferences {
    const stored: Partial<Preferences> | undefined = this.db.get(userId);
    return {
      notifications_enabled: stored?.notifications_enabled ?? DEFAULT_PREFERENCES.notifications_enabled,
      quote_tolerance: stored?.quote_tolerance ?? DEFAULT_PREFERENCES.quote_tolerance,
      anonymous_mode_enabled: stored?.anonymous_mode_enabled ?? DEFAULT_PREFERENCES.anonymous_mode_enabled,
    };
  }

  /** Read-modify-write in one transaction, so two PATCHes of different fields both survive. Durable. */
  update(userId: string, patch: PreferencesPatch): Promise<Preferences> {
    if (Object.keys(patch).length === 0) return Promise.resolve(this.get(userId)); // nothing to write
    const updated = this.store.transact(() => {
      const next = this.get(userId);
      if (patch.notifications_enabled !== undefined) next.notifications_enabled = patch.notifications_enabled;
      if (patch.quote_tolerance !== undefined) next.quote_tolerance = patch.quote_tolerance;
      if (patch.anonymous_mode_enabled !== undefined) next.anonymous_mode_enabled = patch.anonymous_mode_enabled;
      void this.db.put(userId, next);
      return next;
    });
    if (this.onUpdated === null) return updated;
    return updated.then((next) => {
      this.onUpdated?.(userId, { ...next });
      return next;
    });
  }
}
