// Contract section 12: price reports, signed (POST /v1/oracle/prices) and the admin's unsigned ones.
import { Type, type Static } from '@sinclair/typebox';
import { SafeInt, StrictObject } from './common.js';
import { MAX_DATE_MS } from './markets.js';

/**
 * At most 1,000 reports a request (contract section 12). For signed reports the 64 KiB body limit (section 1)
 * binds first: one takes 165 bytes of JSON with a 13-digit ts_ms and price, so 390 fit (468 at the very
 * shortest). Unsigned ones take 62 bytes, so all 1,000 fit. docs/oracle.md has the arithmetic.
 */
export const MAX_REPORTS_PER_REQUEST = 1000;

const Asset = Type.String({ pattern: '^[A-Z0-9]{1,16}$', description: 'a configured price asset (PARLAYD_PRICE_ASSETS)' });
const TsMs = SafeInt({ maximum: MAX_DATE_MS, description: 'Unix ms the price is for' });
/** A JSON integer like every other int64 input (contract section 1); u64 in the signed bytes. */
const PriceE8 = SafeInt({ minimum: 1, description: 'price × 10^8' });

export const SignedPriceReport = StrictObject({
  asset: Asset,
  ts_ms: TsMs,
  price_e8: PriceE8,
  // 512 characters, as every other signature input: beyond it no encoding is a signature (schema, 400);
  // within it anything but base64 of 65 bytes is the report's own INVALID_SIGNATURE.
  signature: Type.String({ maxLength: 512, description: 'base64 of r||s||v (65 bytes), EIP-191 personal-sign over the 41 report bytes' }),
});
export type SignedPriceReport = Static<typeof SignedPriceReport>;

export const UnsignedPriceReport = StrictObject({ asset: Asset, ts_ms: TsMs, price_e8: PriceE8 });
export type UnsignedPriceReport = Static<typeof UnsignedPriceReport>;

export const SignedPriceReports = StrictObject({
  reports: Type.Array(SignedPriceReport, { minItems: 1, maxItems: MAX_REPORTS_PER_REQUEST }),
});
export const UnsignedPriceReports = StrictObject({
  reports: Type.Array(UnsignedPriceReport, { minItems: 1, maxItems: MAX_REPORTS_PER_REQUEST }),
});

/** Codes a single report can be refused with; the rest of its batch is judged on its own. */
export const ReportRejectionCode = Type.Union(
  ['INVALID_SIGNATURE', 'ORACLE_SIGNER_UNKNOWN', 'ORACLE_CONFLICT', 'ORACLE_OUT_OF_ORDER', 'MARKET_NOT_FOUND', 'VALIDATION_FAILED'].map(
    (code) => Type.Literal(code),
  ),
);
export type ReportRejectionCode = Static<typeof ReportRejectionCode>;

export const PriceReportsAnswer = Type.Object({
  accepted: SafeInt({ description: 'reports stored by this request' }),
  duplicates: SafeInt({ description: 'reports already stored with the same price (idempotent)' }),
  rejected: Type.Array(Type.Object({ index: SafeInt(), code: ReportRejectionCode }), { description: 'in index order' }),
});
export type PriceReportsAnswer = Static<typeof PriceReportsAnswer>;
