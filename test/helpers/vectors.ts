// The signing vectors (test/fixtures/signing-vectors.json, made by an independent signer: see
// test/fixtures/README.md), read and typed in one place for every test that checks our bytes against them.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Order } from '../../src/contract/rfq.js';
import { repoRoot } from './paths.js';

/** An order as the vectors give it: the JSON a client would send (src/contract/rfq.ts), without its signature. */
export type VectorOrder = Omit<Order, 'signature'>;

export interface SignedOrderVector {
  order: VectorOrder;
  /** The interface's binary signing format of `order`, hex without 0x. */
  bytes_hex: string;
  bytes_len: number;
  min_odds_e4: number;
  /** order_type as signed: FOK (2) when the order omits it. */
  order_type_signed: number;
  /** The 65-byte EIP-191 signature of bytes_hex, as order.signature carries it. */
  signature_base64: string;
  signature_hex_v27: string;
  signature_hex_v0: string;
}

export interface MakerChallengeVector {
  domain_tag: string;
  nonce_hex: string;
  /** Unix seconds. */
  timestamp: number;
  /** The 75 signed bytes: tag, nonce, timestamp u64 LE. */
  bytes_hex: string;
  bytes_len: number;
  signature_hex: string;
}

export interface SigningVectors {
  signer_private_key: string;
  signer_address: string;
  orders: SignedOrderVector[];
  maker_challenge: MakerChallengeVector;
  note: string;
}

export const signingVectorsPath = resolve(repoRoot, 'test/fixtures/signing-vectors.json');
export const signingVectors = JSON.parse(readFileSync(signingVectorsPath, 'utf8')) as SigningVectors;
