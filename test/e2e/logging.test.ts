// Structured logs (contract section 10): every stdout line is a JSON object, and no secret ever appears in
// the log or on stderr: not a session token, the admin token, an id_token, a login signature or a private key,
// whatever the requests did. The server runs at the most verbose level so that any logging path shows up.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { mintIdToken, writeDevIdpKeys, type DevIdpKey } from '../../src/auth/dev-idp.js';
import { client } from '../helpers/http.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { credit, loginWallet } from '../helpers/users.js';

describe('logs', () => {
  let idpDir: string;
  let server: TestServer;
  /** Everything that must never be logged, gathered while exercising the service. */
  const secrets: string[] = [];

  before(async () => {
    idpDir = mkdtempSync(join(tmpdir(), 'parlayd-idp-'));
    const idp = await writeDevIdpKeys(idpDir, ['ES256']);
    const key = idp.keys[0] as DevIdpKey;
    const issuer = 'https://idp.log.example';
    const audience = 'parlayd-logs';
    server = await startServer({
      env: { PARLAYD_LOG_LEVEL: 'trace', PARLAYD_JWKS_FILE: idp.jwksFile, PARLAYD_JWT_ISSUER: issuer, PARLAYD_JWT_AUDIENCE: audience },
    });
    secrets.push(server.adminToken, key.privateJwk.d!);
    const api = client(server.baseUrl);

    // Wallet logins, good and bad (a bad one carries a valid signature for a spent nonce).
    for (let i = 0; i < 3; i++) {
      const wallet = Wallet.createRandom();
      secrets.push(wallet.privateKey);
      const user = await loginWallet(server, wallet);
      secrets.push(user.token);
      await credit(server, user.address, 1_000_000);
      await client(server.baseUrl, user.token).patch('/v1/user/preferences', { quote_tolerance: 'strict' });
    }
    const wallet = Wallet.createRandom();
    const challenge = await api.post('/v1/auth/wallet/challenge', { address: wallet.address });
    const signature = await wallet.signMessage(challenge.body.message);
    secrets.push(signature.slice(2));
    const good = await api.post('/v1/auth/wallet', { message: challenge.body.message, signature });
    secrets.push(good.body.session_token);
    assert.equal((await api.post('/v1/auth/wallet', { message: challenge.body.message, signature })).status, 401);

    // Identity-provider logins, good and bad.
    const mint = (overrides: { audience?: string; expiresInS?: number } = {}) =>
      mintIdToken({
        privateJwk: key.privateJwk,
        kid: key.kid,
        alg: key.alg,
        issuer,
        audience: overrides.audience ?? audience,
        sub: randomUUID(),
        wallet: Wallet.createRandom().address,
        expiresInS: overrides.expiresInS ?? 600,
      });
    for (const idToken of [await mint(), await mint({ audience: 'other' }), await mint({ expiresInS: -10 })]) {
      secrets.push(idToken);
      const res = await api.post('/v1/auth/session', { id_token: idToken });
      if (res.status === 200) secrets.push(res.body.session_token);
    }

    // Refused bearers and a logout.
    await client(server.baseUrl, good.body.session_token).get('/v1/admin/users/credit');
    await client(server.baseUrl, server.adminToken).get('/v1/user/balance');
    await client(server.baseUrl, good.body.session_token).post('/v1/auth/logout');
    await client(server.baseUrl, good.body.session_token).get('/v1/user/balance');
    assert.equal(await server.stop(), 0, server.stderr.join('\n'));
  });
  after(() => {
    removeDataDir(server);
    rmSync(idpDir, { recursive: true, force: true });
  });

  it('every log line is a JSON object with a level, a time and a message', () => {
    assert.ok(server.logs.length >= 2, 'at least the listening and stopping lines');
    for (const entry of server.logs) {
      assert.equal(typeof entry['level'], 'number');
      assert.equal(typeof entry['time'], 'number');
      assert.equal(typeof entry['msg'], 'string');
      assert.equal(entry['service'], 'parlayd');
    }
    const listening = server.logs.find((entry) => entry['msg'] === 'listening');
    assert.equal(listening?.['port'], server.port);
  });

  it('no log line and no stderr line contains a session token, the admin token, an id_token, a signature or a key', () => {
    assert.ok(secrets.length >= 14, `collected ${secrets.length} secrets`);
    const logText = JSON.stringify(server.logs);
    const stderrText = server.stderr.join('\n');
    for (const secret of secrets) {
      assert.ok(secret.length >= 20);
      assert.ok(!logText.includes(secret), `a secret (${secret.slice(0, 6)}…) is in the log`);
      assert.ok(!stderrText.includes(secret), `a secret (${secret.slice(0, 6)}…) is on stderr`);
    }
  });
});
