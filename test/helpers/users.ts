// Arrange helpers: a user logged in through the real SIWE flow with an ethers wallet (the independent
// signer), and admin funding.
import { Wallet, HDNodeWallet } from 'ethers';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { client } from './http.js';
import type { TestServer } from './server.js';

export interface TestUser {
  wallet: HDNodeWallet | Wallet;
  address: string; // lowercase 0x
  token: string;
  userId: string;
}

export async function loginWallet(server: TestServer, wallet: HDNodeWallet | Wallet = Wallet.createRandom()): Promise<TestUser> {
  const api = client(server.baseUrl);
  const challenge = await api.post('/v1/auth/wallet/challenge', { address: wallet.address });
  assert.equal(challenge.status, 200, JSON.stringify(challenge.body));
  const signature = await wallet.signMessage(challenge.body.message);
  const login = await api.post('/v1/auth/wallet', { message: challenge.body.message, signature });
  assert.equal(login.status, 200, JSON.stringify(login.body));
  return { wallet, address: wallet.address.toLowerCase(), token: login.body.session_token, userId: login.body.user_id };
}

export async function credit(server: TestServer, address: string, amountMicros: number, idempotencyKey = randomUUID()) {
  const result = await client(server.baseUrl, server.adminToken).post('/v1/admin/users/credit', {
    wallet: address,
    amount_micros: amountMicros,
    idempotency_key: idempotencyKey,
  });
  assert.equal(result.status, 200, JSON.stringify(result.body));
  return result.body;
}

/** A logged-in user with `amountMicros` available. */
export async function fundedUser(server: TestServer, amountMicros: number): Promise<TestUser> {
  const user = await loginWallet(server);
  await credit(server, user.address, amountMicros);
  return user;
}

/**
 * A mixed-case spelling of a checksummed address that fails its EIP-55 checksum: the case of one letter is
 * flipped and both cases remain. Such an input is refused (contract section 1).
 */
export function breakChecksum(checksummed: string): string {
  const body = checksummed.slice(2);
  const lowers = (body.match(/[a-f]/g) ?? []).length;
  const uppers = (body.match(/[A-F]/g) ?? []).length;
  // Flip a letter of a case that has another letter of the same case, so the result stays mixed case.
  assert.ok(lowers >= 2 || uppers >= 2, 'breakChecksum needs an address with at least two letters of one case');
  const i = body.search(lowers >= 2 ? /[a-f]/ : /[A-F]/);
  const ch = body.charAt(i);
  const flipped = ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase();
  return '0x' + body.slice(0, i) + flipped + body.slice(i + 1);
}
