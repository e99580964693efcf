// EIP-4361 messages: the exact text layout, build -> parse round trips, and strict refusal of anything the
// service would not have written.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildSiweMessage, MAX_SIWE_MESSAGE_CHARS, parseSiweMessage, type SiweFields } from '../../src/auth/siwe.js';

const ADDRESS = '0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A';

const FULL: SiweFields = {
  domain: 'parlayd.example:8443',
  address: ADDRESS,
  statement: 'Sign in to parlayd.',
  uri: 'https://parlayd.example:8443/v1/auth/wallet',
  version: '1',
  chainId: 8453,
  nonce: 'Qm9vX3Nv1234abcd',
  issuedAt: '2025-11-22T10:00:00.000Z',
  expirationTime: '2025-11-22T10:05:00.000Z',
};

const FULL_TEXT = [
  'parlayd.example:8443 wants you to sign in with your Ethereum account:',
  ADDRESS,
  '',
  'Sign in to parlayd.',
  '',
  'URI: https://parlayd.example:8443/v1/auth/wallet',
  'Version: 1',
  'Chain ID: 8453',
  'Nonce: Qm9vX3Nv1234abcd',
  'Issued At: 2025-11-22T10:00:00.000Z',
  'Expiration Time: 2025-11-22T10:05:00.000Z',
].join('\n');

function minimalFields(): SiweFields {
  const { statement: _statement, expirationTime: _expirationTime, ...rest } = FULL;
  return rest;
}

describe('buildSiweMessage', () => {
  it('writes the EIP-4361 layout exactly', () => {
    assert.equal(buildSiweMessage(FULL), FULL_TEXT);
  });

  it('without a statement the address is followed by two empty lines (EIP-4361 ABNF)', () => {
    const text = buildSiweMessage(minimalFields());
    assert.ok(text.startsWith(`parlayd.example:8443 wants you to sign in with your Ethereum account:\n${ADDRESS}\n\n\nURI: `));
    assert.ok(text.endsWith('\nIssued At: 2025-11-22T10:00:00.000Z'));
  });

  it('writes the address in EIP-55 form whatever case it was given', () => {
    assert.equal(buildSiweMessage({ ...FULL, address: ADDRESS.toLowerCase() }), FULL_TEXT);
  });

  it('asserts on fields the service should never produce', () => {
    const bad: SiweFields[] = [
      { ...FULL, address: '0x1234' },
      { ...FULL, statement: 'two\nlines' },
      { ...FULL, statement: '' },
      { ...FULL, nonce: 'short' },
      { ...FULL, chainId: 0 },
      { ...FULL, issuedAt: 'yesterday' },
      { ...FULL, domain: 'bad domain' },
    ];
    for (const f of bad) assert.throws(() => buildSiweMessage(f), JSON.stringify(f));
  });
});

describe('parseSiweMessage', () => {
  it('round-trips every optional-field combination', () => {
    const variants: SiweFields[] = [
      FULL,
      minimalFields(),
      { ...minimalFields(), statement: 'Only a statement.' },
      { ...minimalFields(), expirationTime: '2030-01-01T00:00:00+02:00' },
      { ...FULL, domain: 'localhost', uri: 'http://localhost:8080', chainId: 1 },
    ];
    for (const f of variants) assert.deepEqual(parseSiweMessage(buildSiweMessage(f)), f);
  });

  it('parses the hand-written layout', () => {
    assert.deepEqual(parseSiweMessage(FULL_TEXT), FULL);
  });

  const lines = FULL_TEXT.split('\n');
  const withLines = (edit: (l: string[]) => void): string => {
    const copy = [...lines];
    edit(copy);
    return copy.join('\n');
  };
  const refused: Array<[string, string]> = [
    ['trailing newline', FULL_TEXT + '\n'],
    ['extra line at the end', FULL_TEXT + '\nRequest ID: 1'],
    ['Not Before field', withLines((l) => l.splice(10, 0, 'Not Before: 2025-11-22T10:00:00.000Z'))],
    ['Resources section', FULL_TEXT + '\nResources:\n- https://parlayd.example/'],
    ['CRLF line endings', FULL_TEXT.replace(/\n/g, '\r\n')],
    ['Nonce before Chain ID', withLines((l) => l.splice(7, 2, lines[8] ?? '', lines[7] ?? ''))],
    ['Issued At after Expiration Time', withLines((l) => l.splice(9, 2, lines[10] ?? '', lines[9] ?? ''))],
    ['scheme before the domain', 'https://' + FULL_TEXT],
    ['lowercase address', FULL_TEXT.replace(ADDRESS, ADDRESS.toLowerCase())],
    ['bad checksum', FULL_TEXT.replace(ADDRESS, ADDRESS.replace('E7E376', 'e7E376'))],
    ['address without 0x', FULL_TEXT.replace(ADDRESS, ADDRESS.slice(2))],
    ['missing blank line after the statement', withLines((l) => l.splice(4, 1))],
    ['missing blank line before the statement', withLines((l) => l.splice(2, 1))],
    ['two-line statement', withLines((l) => l.splice(4, 0, 'more text'))],
    ['only one blank line and no statement', withLines((l) => l.splice(3, 2))],
    ['Version 2', FULL_TEXT.replace('Version: 1', 'Version: 2')],
    ['missing Version', withLines((l) => l.splice(6, 1))],
    ['Chain ID 0', FULL_TEXT.replace('Chain ID: 8453', 'Chain ID: 0')],
    ['Chain ID with a leading zero', FULL_TEXT.replace('Chain ID: 8453', 'Chain ID: 08453')],
    ['Chain ID not a number', FULL_TEXT.replace('Chain ID: 8453', 'Chain ID: 84x3')],
    ['nonce under 8 chars', FULL_TEXT.replace('Qm9vX3Nv1234abcd', 'abc123')],
    ['nonce with punctuation', FULL_TEXT.replace('Qm9vX3Nv1234abcd', 'Qm9vX3Nv-1234abcd')],
    ['Issued At not RFC 3339', FULL_TEXT.replace('2025-11-22T10:00:00.000Z', '2025-11-22 10:00:00')],
    ['Issued At impossible month', FULL_TEXT.replace('2025-11-22T10:00:00.000Z', '2025-13-22T10:00:00.000Z')],
    ['field label in lowercase', FULL_TEXT.replace('URI: ', 'uri: ')],
    ['double space after a label', FULL_TEXT.replace('URI: ', 'URI:  ')],
    ['URI without a scheme', FULL_TEXT.replace('URI: https://parlayd.example:8443', 'URI: ')],
    ['URI with a space', FULL_TEXT.replace('/v1/auth/wallet', '/v1/auth wallet')],
    ['domain with a space', FULL_TEXT.replace('parlayd.example:8443 wants', 'parlayd example wants')],
    ['empty domain', FULL_TEXT.replace('parlayd.example:8443 wants', ' wants')],
    ['wrong header text', FULL_TEXT.replace('wants you to sign in', 'wants you to log in')],
    ['empty string', ''],
    ['over the size bound', FULL_TEXT.replace('Sign in to parlayd.', 'x'.repeat(MAX_SIWE_MESSAGE_CHARS))],
  ];
  for (const [label, text] of refused) {
    it(`refuses: ${label}`, () => {
      assert.notEqual(text, FULL_TEXT);
      assert.equal(parseSiweMessage(text), null);
    });
  }

  it('refuses non-strings', () => {
    assert.equal(parseSiweMessage(undefined as unknown as string), null);
    assert.equal(parseSiweMessage(42 as unknown as string), null);
  });
});
