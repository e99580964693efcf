// Any thread. The durable shape of a stored price report (oracle/prices.ts).

export interface PriceReportRecord {
  /** Decimal string (u64 in the signed bytes). */
  priceE8: string;
  /** The recovered oracle address, or 'admin' for the admin's unsigned route. */
  source: string;
  receivedAtMs: number;
}
