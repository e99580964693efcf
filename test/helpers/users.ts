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
