// The maker desk's HTTP bodies: GET /v1/mm/quotes, the protection routes, GET /v1/mm/stats. The
// routes (http/routes/mm-desk.ts) validate and document with them; the SDK (sdk/maker-http.ts) types with them.
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, SafeInt, StrictObject, Uuid } from './common.js';
import { PROTECTION_TRIP_REASONS } from './mm-stream.js';

const MicrosLimit = Nullable(
  Type.String({ pattern: '^[1-9][0-9]{0,18}$', description: 'positive decimal string of USDC micros; null: no limit' }),
);
export const ProtectionLimitsSchema = StrictObject(
  {
    window_ms: Nullable(SafeInt({ minimum: 1, maximum: 86_400_000, description: 'the counting window; null: since the last reset' })),
    max_fills: Nullable(SafeInt({ minimum: 1, maximum: 1_000_000, description: 'fills in the window that trip it; null: no limit' })),
    max_filled_wager_micros: MicrosLimit,
    max_locked_micros: MicrosLimit,
  },
  { $id: 'ProtectionLimits' },
);
export const ProtectionView = Type.Object(
  {
    maker: ProtectionLimitsSchema,
    admin: ProtectionLimitsSchema,
    effective: ProtectionLimitsSchema,
    tripped: Nullable(
      Type.Union(
        PROTECTION_TRIP_REASONS.map((r) => Type.Literal(r)),
        { description: 'the limit that tripped; null: quotes are taken' },
      ),
    ),
  },
  { $id: 'MakerProtection' },
);
export const StandingQuote = Type.Object({
  request_id: Uuid,
  quote_id: Type.String(),
  odds: Type.Number(),
  max_wager_micros: Type.String(),
  last_look: Type.Boolean(),
  received_at_ms: SafeInt(),
});
const Percentile = Nullable(
  Type.Number({ description: 'ms; the upper edge of its histogram bin (bins grow by 25 %); null without quotes' }),
);
export const StatsView = Type.Object(
  {
    since_ms: SafeInt({ description: 'the start actually counted from: since_ms, or the oldest retained minute (1 h)' }),
    rfqs_received: SafeInt(),
    quotes: SafeInt(),
    declines: SafeInt(),
    fills: SafeInt(),
    hit_rate: Type.Number({ description: 'fills / quotes; 0 without quotes' }),
    last_look_offered: SafeInt(),
    last_look_rejected: SafeInt({ description: 'offered last looks that did not fill: rejected, silent, or the socket closed' }),
    filled_wager_micros: Type.String(),
    quote_latency_ms: Type.Object({ p50: Percentile, p90: Percentile, p99: Percentile }),
  },
  { $id: 'MakerStats' },
);

export type ProtectionLimitsBody = Static<typeof ProtectionLimitsSchema>;
export type ProtectionView = Static<typeof ProtectionView>;
export type StandingQuote = Static<typeof StandingQuote>;
export type StatsView = Static<typeof StatsView>;
