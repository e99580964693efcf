// Any thread. The durable shapes of registered makers and their protection limits (mm/registry.ts, mm/protection.ts).

export interface MakerRecord {
  /** Lowercase `0x` + 40 hex (contract section 1). */
  address: string;
  name: string;
  createdAtMs: number;
}

/** The wire form (null = no limit); money as decimal strings (contract section 1). */
export interface ProtectionLimits {
  window_ms: number | null;
  max_fills: number | null;
  max_filled_wager_micros: string | null;
  max_locked_micros: string | null;
}
