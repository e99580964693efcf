// EIP-4361 "Sign-In with Ethereum" messages for wallet login (contract section 3). Pure; runs on the main
// thread (auth routes) and in tests and the SDK.
//
// Only the fields parlayd issues are supported: no scheme prefix, Not Before, Request ID or Resources.
// The parser is strict on purpose: the server re-reads a message it issued, so anything it would not have
// written (an extra line, reordering, CRLF, a non-checksummed address) is refused rather than interpreted.

import assert from 'node:assert/strict';
import { parseAddress, toChecksumAddress } from '../crypto/address.js';

export interface SiweFields {
  /** RFC 3986 authority (host[:port]) asking for the sign-in. */
  domain: string;
  /** EIP-55 checksum form, as the message carries it. */
  address: string;
  statement?: string;
  uri: string;
  version: '1';
  chainId: number;
  nonce: string;
  /** RFC 3339 date-time. */
  issuedAt: string;
  expirationTime?: string;
}

/** Messages are a few hundred bytes; a bound keeps the regex work on client input small. */
export const MAX_SIWE_MESSAGE_CHARS = 4096;

const HEADER_SUFFIX = ' wants you to sign in with your Ethereum account:';
const DOMAIN_RE = /^[A-Za-z0-9.-]+(?::[0-9]{1,5})?$/;
// EIP-4361: statement is any printable text without a newline.
const STATEMENT_RE = /^[\x20-\x7e]+$/;
const URI_RE = /^[A-Za-z][A-Za-z0-9+.-]*:[\x21-\x7e]+$/;
const CHAIN_ID_RE = /^[1-9][0-9]{0,15}$/;
// EIP-4361: at least 8 alphanumeric characters.
const NONCE_RE = /^[A-Za-z0-9]{8,128}$/;
const RFC3339_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

/** The EIP-4361 text for `f`. Fields come from our own code, so an invalid one is a bug and asserts. */
export function buildSiweMessage(f: SiweFields): string {
  const address = parseAddress(f.address);
  assert.ok(address !== null, 'siwe: address is not a valid address');
  const fields: SiweFields = { ...f, address: toChecksumAddress(address) };
  assert.ok(areFieldsValid(fields), 'siwe: invalid field');
  const lines = [`${fields.domain}${HEADER_SUFFIX}`, fields.address, ''];
  // EIP-4361 ABNF: "[ statement LF ] LF", so without a statement the address is followed by two empty lines.
  if (fields.statement !== undefined) lines.push(fields.statement);
  lines.push(
    '',
    `URI: ${fields.uri}`,
    `Version: ${fields.version}`,
    `Chain ID: ${fields.chainId}`,
    `Nonce: ${fields.nonce}`,
    `Issued At: ${fields.issuedAt}`,
  );
  if (fields.expirationTime !== undefined) lines.push(`Expiration Time: ${fields.expirationTime}`);
  return lines.join('\n');
}

/** Fields of a message in exactly the layout buildSiweMessage writes; null for anything else. */
export function parseSiweMessage(text: string): SiweFields | null {
  if (typeof text !== 'string' || text.length > MAX_SIWE_MESSAGE_CHARS) return null;
  const lines = text.split('\n');
  const header = lines[0] ?? '';
  if (!header.endsWith(HEADER_SUFFIX) || lines[2] !== '') return null;
  const hasStatement = lines[3] !== '';
  if (hasStatement && lines[4] !== '') return null;
  // URI, Version, Chain ID, Nonce, Issued At, then optionally Expiration Time. A trailing '\n' shows up as
  // an extra empty line here and is refused like any other extra line.
  const tail = lines.slice(hasStatement ? 5 : 4);
  if (tail.length !== 5 && tail.length !== 6) return null;
  const uri = readField(tail[0], 'URI: ');
  const version = readField(tail[1], 'Version: ');
  const chainIdText = readField(tail[2], 'Chain ID: ');
  const nonce = readField(tail[3], 'Nonce: ');
  const issuedAt = readField(tail[4], 'Issued At: ');
  const expirationTime = tail.length === 6 ? readField(tail[5], 'Expiration Time: ') : undefined;
  if (uri === null || version !== '1' || chainIdText === null || !CHAIN_ID_RE.test(chainIdText)) return null;
  if (nonce === null || issuedAt === null || expirationTime === null) return null;
  const fields: SiweFields = {
    domain: header.slice(0, -HEADER_SUFFIX.length),
    address: lines[1] ?? '',
    uri,
    version,
    chainId: Number(chainIdText),
    nonce,
    issuedAt,
  };
  if (hasStatement) fields.statement = lines[3] ?? '';
  if (expirationTime !== undefined) fields.expirationTime = expirationTime;
  return areFieldsValid(fields) ? fields : null;
}

function readField(line: string | undefined, prefix: string): string | null {
  return line !== undefined && line.startsWith(prefix) ? line.slice(prefix.length) : null;
}

function isChecksummed(address: string): boolean {
  return parseAddress(address) !== null && toChecksumAddress(address) === address;
}

function areFieldsValid(f: SiweFields): boolean {
  return (
    DOMAIN_RE.test(f.domain) &&
    isChecksummed(f.address) &&
    (f.statement === undefined || STATEMENT_RE.test(f.statement)) &&
    URI_RE.test(f.uri) &&
    f.version === '1' &&
    Number.isSafeInteger(f.chainId) &&
    f.chainId >= 1 &&
    NONCE_RE.test(f.nonce) &&
    isRfc3339(f.issuedAt) &&
    (f.expirationTime === undefined || isRfc3339(f.expirationTime))
  );
}

function isRfc3339(text: string): boolean {
  return RFC3339_RE.test(text) && !Number.isNaN(Date.parse(text));
}
