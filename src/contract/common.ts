// Shared building blocks of every request and response schema (contract section 1).
import { Type, type ObjectOptions, type Static, type TProperties } from '@sinclair/typebox';
import { validationError } from '../lib/errors.js';

/** Request objects reject unknown fields (contract section 1). */
export const StrictObject = <T extends TProperties>(properties: T, options: ObjectOptions = {}) =>
  Type.Object(properties, { additionalProperties: false, ...options });

export const Uuid = Type.String({
  pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
  description: 'lowercase hyphenated UUID',
});

/**
 * A client-chosen UUID (an idempotency key): hex digits of either case, as RFC 4122 reads them on input, so a
 * client whose platform prints them upper case is not refused. One UUID is one key: the reader compares it
 * lowercase (`canonicalUuid`).
 */
export const UuidInput = Type.String({
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  description: 'hyphenated UUID, either case; compared lowercase',
});
export const canonicalUuid = (uuid: string): string => uuid.toLowerCase();

/** A JSON integer that is a safe integer (≤ 2^53−1), as every int64 input must be. */
export const SafeInt = (options: { minimum?: number; maximum?: number; description?: string } = {}) =>
  Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, ...options });

export const Micros = (description = 'USDC micros') => SafeInt({ description });

/**
 * A positive money input of a route the contract added (credits, withdrawals). The contract makes the money
 * fields it adds decimal strings; a JSON integer, what the interface's own int64 inputs are, is taken as well.
 * Either way a safe integer: `positiveMicrosOf` reads it and refuses a string above 2^53−1.
 */
export const PositiveMicrosInput = (description: string) =>
  Type.Union([SafeInt({ minimum: 1 }), Type.String({ pattern: '^[1-9][0-9]{0,15}$' })], {
    description: `${description}: a decimal integer string or a JSON integer, 1 to 2^53−1`,
  });

export function positiveMicrosOf(value: number | string, path: string): bigint {
  const micros = BigInt(value);
  if (micros > MAX_SAFE_MICROS) throw validationError([{ path, message: `Expected at most ${Number.MAX_SAFE_INTEGER}` }]);
  return micros;
}
const MAX_SAFE_MICROS = BigInt(Number.MAX_SAFE_INTEGER);
export const MicrosString = Type.String({ pattern: '^-?[0-9]+$', description: 'decimal integer string of micros' });

export const MarketId = SafeInt({ minimum: 1, description: 'market id' });
export const Direction = Type.Union([Type.Literal('up'), Type.Literal('down')]);
export type Direction = Static<typeof Direction>;

/** Input address: with or without 0x, any case; mixed case must pass EIP-55 (checked by parseAddress). */
export const AddressInput = Type.String({ pattern: '^(0x)?[0-9a-fA-F]{40}$', description: 'EVM address' });
/** Output address: always lowercase 0x form. */
export const Address = Type.String({ pattern: '^0x[0-9a-f]{40}$' });

export const ErrorBody = Type.Object(
  {
    code: Type.String({ pattern: '^[A-Z_]+$' }),
    message: Type.String(),
    details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  },
  { $id: 'ErrorBody' },
);

export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
