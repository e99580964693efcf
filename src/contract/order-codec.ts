// The bytes an order signature covers (interface "Binary signing format of an order"), and the min_odds
// decimal -> odds_e4 conversion those bytes depend on. Pure; runs on any thread (admission on the main
// thread, tests, the maker/taker SDK).
//
//   0   20  user              raw address bytes
//   20   8  wager_micros      u64 LE
//   28   4  min_odds          u32 LE, round(min_odds * 10000)
//   32   8  nonce             u64 LE
//   40   8  expires_at_ms     u64 LE
//   48   1  order_type        u8 (1 IOC, 2 FOK)
//   49   1  shield_on         u8 0/1
//   50   1  leg_count         u8
//   51+9i 8 leg i market_id   u64 LE
//   59+9i 1 leg i direction   u8 0 up, 1 down

import assert from 'node:assert/strict';
import { bytesToHex, hexToBytes } from '../crypto/hex.js';
// A type only, erased at run time: the codec, a pure leaf, loads no schema module (contract/rfq.ts imports it).
import type { Direction } from './common.js';

export type { Direction };

export interface SignableLeg {
  marketId: number;
  direction: Direction;
}

export interface SignableOrder {
  /** Lowercase `0x` + 40 hex. */
  user: string;
  wagerMicros: number;
  minOddsE4: number;
  nonce: number;
  expiresAtMs: number;
  orderType: OrderType;
  shieldOn: boolean;
  legs: ReadonlyArray<SignableLeg>;
}

// The signing format's bounds, the one place they are stated: the schemas (contract/rfq.ts, contract/mm.ts)
// and matching read them from here.
export const MIN_LEGS = 1;
export const MAX_LEGS = 8;
export const ORDER_TYPE_IOC = 1;
export const ORDER_TYPE_FOK = 2;
/** 1 = IOC, 2 = FOK (contract/rfq.ts OrderType is its schema). */
export type OrderType = typeof ORDER_TYPE_IOC | typeof ORDER_TYPE_FOK;
export const ORDER_HEADER_BYTES = 51;
export const ORDER_LEG_BYTES = 9;
const U32_MAX = 0xffff_ffff;
const ODDS_SCALE_E4 = 10_000;
const CANONICAL_ADDRESS_RE = /^0x[0-9a-f]{40}$/;

/** Signing bytes of an order. Callers validate first: a value out of range here is a bug, so it asserts. */
export function encodeOrder(o: SignableOrder): Uint8Array {
  assertSignableOrder(o);
  const out = new Uint8Array(ORDER_HEADER_BYTES + ORDER_LEG_BYTES * o.legs.length);
  const view = new DataView(out.buffer);
  out.set(hexToBytes(o.user.slice(2)) ?? [], 0);
  view.setBigUint64(20, BigInt(o.wagerMicros), true);
  view.setUint32(28, o.minOddsE4, true);
  view.setBigUint64(32, BigInt(o.nonce), true);
  view.setBigUint64(40, BigInt(o.expiresAtMs), true);
  view.setUint8(48, o.orderType);
  view.setUint8(49, o.shieldOn ? 1 : 0);
  view.setUint8(50, o.legs.length);
  o.legs.forEach((leg, i) => {
    const at = ORDER_HEADER_BYTES + ORDER_LEG_BYTES * i;
    view.setBigUint64(at, BigInt(leg.marketId), true);
    view.setUint8(at + 8, leg.direction === 'up' ? 0 : 1);
  });
  return out;
}

/**
 * Inverse of encodeOrder: null for any byte string encodeOrder cannot produce (wrong length, unknown
 * order_type, flag or direction byte, leg count outside 1..8, odds 0, a u64 above 2^53-1).
 */
export function decodeOrder(bytes: Uint8Array): SignableOrder | null {
  if (!(bytes instanceof Uint8Array) || bytes.length < ORDER_HEADER_BYTES) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const legCount = view.getUint8(50);
  if (legCount < MIN_LEGS || legCount > MAX_LEGS) return null;
  if (bytes.length !== ORDER_HEADER_BYTES + ORDER_LEG_BYTES * legCount) return null;
  const orderType = view.getUint8(48);
  const shieldByte = view.getUint8(49);
  const minOddsE4 = view.getUint32(28, true);
  if ((orderType !== 1 && orderType !== 2) || shieldByte > 1 || minOddsE4 === 0) return null;
  const wagerMicros = readSafeU64(view, 20);
  const nonce = readSafeU64(view, 32);
  const expiresAtMs = readSafeU64(view, 40);
  if (wagerMicros === null || nonce === null || expiresAtMs === null) return null;
  const legs = decodeLegs(view, legCount);
  if (legs === null) return null;
  const user = '0x' + bytesToHex(bytes.subarray(0, 20));
  return { user, wagerMicros, minOddsE4, nonce, expiresAtMs, orderType, shieldOn: shieldByte === 1, legs };
}

/**
 * round(odds * 10000) of the decimal the client wrote, or null when not finite, <= 0, rounding to 0, or
 * above u32. Computed on the shortest decimal string of the double (what JSON.parse read), never on
 * odds * 10000 in floating point: 1.15 * 10000 is 11499.999999999998, which truncates to the wrong value.
 * Digits past the 4th decimal round half-up on the 5th (2.67505 -> 26751, 1.00004 -> 10000).
 */
export function oddsToE4(odds: number): number | null {
  if (typeof odds !== 'number' || !Number.isFinite(odds) || odds <= 0) return null;
  const decimal = splitDecimal(String(odds));
  if (decimal === null) return null;
  // Integer digits of odds * 10^4: the decimal point moves 4 places right.
  const pointAt = decimal.pointAt + 4;
  const digits = decimal.digits;
  const integerDigits = pointAt <= 0 ? '' : digits.slice(0, pointAt).padEnd(pointAt, '0');
  const roundDigit = pointAt < 0 ? '0' : digits.charAt(pointAt) || '0';
  // Number() of up to ~310 digits is exact below 2^53 and only inexact far above U32_MAX, where it is refused.
  const e4 = Number(integerDigits || '0') + (roundDigit >= '5' ? 1 : 0);
  return e4 >= 1 && e4 <= U32_MAX ? e4 : null;
}

/** odds_e4 to the decimal number for JSON output; e4 / 10000 is the double closest to the 4-decimal value. */
export function e4ToOdds(e4: number): number {
  assert.ok(Number.isInteger(e4) && e4 >= 0 && e4 <= U32_MAX, 'odds_e4 must be a u32 integer');
  return e4 / ODDS_SCALE_E4;
}

// String(n) of a positive finite double: "1.15", "0.00005", "1e+21", "1.5e-7". Returns all significant
// digits and where the decimal point sits in them (value = 0.digits... shifted: digits[0..pointAt) . rest).
function splitDecimal(text: string): { digits: string; pointAt: number } | null {
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(text);
  if (match === null) return null;
  const intPart = match[1] ?? '';
  const fracPart = match[2] ?? '';
  const exponent = match[3] === undefined ? 0 : Number(match[3]);
  return { digits: intPart + fracPart, pointAt: intPart.length + exponent };
}

function decodeLegs(view: DataView, legCount: number): SignableLeg[] | null {
  const legs: SignableLeg[] = [];
  for (let i = 0; i < legCount; i++) {
    const at = ORDER_HEADER_BYTES + ORDER_LEG_BYTES * i;
    const marketId = readSafeU64(view, at);
    const directionByte = view.getUint8(at + 8);
    if (marketId === null || directionByte > 1) return null;
    legs.push({ marketId, direction: directionByte === 0 ? 'up' : 'down' });
  }
  return legs;
}

function readSafeU64(view: DataView, at: number): number | null {
  const value = view.getBigUint64(at, true);
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : null;
}

function assertSignableOrder(o: SignableOrder): void {
  assert.match(o.user, CANONICAL_ADDRESS_RE, 'user must be a lowercase 0x address');
  assertSafeU64(o.wagerMicros, 'wagerMicros');
  assert.ok(Number.isInteger(o.minOddsE4) && o.minOddsE4 >= 1 && o.minOddsE4 <= U32_MAX, 'minOddsE4 out of u32');
  assertSafeU64(o.nonce, 'nonce');
  assertSafeU64(o.expiresAtMs, 'expiresAtMs');
  assert.ok(o.orderType === 1 || o.orderType === 2, 'orderType must be 1 or 2');
  assert.equal(typeof o.shieldOn, 'boolean', 'shieldOn must be boolean');
  assert.ok(o.legs.length >= MIN_LEGS && o.legs.length <= MAX_LEGS, 'legs must number 1..8');
  for (const leg of o.legs) {
    assertSafeU64(leg.marketId, 'marketId');
    assert.ok(leg.direction === 'up' || leg.direction === 'down', 'direction must be up or down');
  }
}

function assertSafeU64(value: number, name: string): void {
  assert.ok(Number.isSafeInteger(value) && value >= 0, `${name} must be a non-negative safe integer`);
}
