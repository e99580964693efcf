// Configuration at start (contract section 10): a bad PARLAYD_* value stops the process with a non-zero
// exit and exactly one stderr line that names the variable (and never echoes a secret); with no admin token
// set, one is generated, printed once, and works.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { client } from '../helpers/http.js';
import { mainScript } from '../helpers/paths.js';
import { removeDataDir, startServer } from '../helpers/server.js';
import { loginWallet } from '../helpers/users.js';

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the service with only `env` (and PATH) set and waits for it to exit on its own. */
function runMain(env: Record<string, string>, timeoutMs = 20_000): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [mainScript], {
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the service did not exit within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('configuration', () => {
  let scratch: string;

  before(() => {
    scratch = mkdtempSync(join(tmpdir(), 'parlayd-config-'));
  });
  after(() => {
    rmSync(scratch, { recursive: true, force: true });
  });

  /** The base every case starts from: valid, on a free port, in a scratch data directory. */
  const baseEnv = () => ({ PARLAYD_PORT: '0', PARLAYD_DATA_DIR: join(scratch, randomUUID()), PARLAYD_ADMIN_TOKEN: 'x'.repeat(32) });

  async function assertRefused(env: Record<string, string>, variable: string): Promise<string> {
    const exit = await runMain({ ...baseEnv(), ...env });
    assert.equal(exit.code, 2, `exit code; stderr: ${exit.stderr}`);
    const lines = exit.stderr.split('\n').filter((line) => line !== '');
    assert.equal(lines.length, 1, `exactly one stderr line, got:\n${exit.stderr}`);
    const [line] = lines as [string];
    assert.ok(line.startsWith('parlayd: configuration error: '), line);
    assert.ok(line.includes(variable), `"${line}" names ${variable}`);
    assert.equal(exit.stdout, '', 'nothing on stdout: the service never started');
    return line;
  }

  const cases: Array<[string, Record<string, string>]> = [
    ['PARLAYD_PORT', { PARLAYD_PORT: 'eighty' }],
    ['PARLAYD_PORT', { PARLAYD_PORT: '65536' }],
    ['PARLAYD_PORT', { PARLAYD_PORT: '-1' }],
    ['PARLAYD_PORT', { PARLAYD_PORT: '80.5' }],
    ['PARLAYD_PORT', { PARLAYD_PORT: '8e3' }],
    ['PARLAYD_MM_DOMAIN_TAG', { PARLAYD_MM_DOMAIN_TAG: 'parlayd:mm:ws-auth:v1:localhost.de' }], // 34 bytes
    ['PARLAYD_MM_DOMAIN_TAG', { PARLAYD_MM_DOMAIN_TAG: 'parlayd:mm:ws-auth:v1:localhost.dev2' }], // 36 bytes
    ['PARLAYD_MM_DOMAIN_TAG', { PARLAYD_MM_DOMAIN_TAG: 'parlayd:mm:ws-auth:v1:localhost.dé' }], // 35 chars, 36 bytes
    ['PARLAYD_LOG_LEVEL', { PARLAYD_LOG_LEVEL: 'loud' }],
    ['PARLAYD_SHARDS', { PARLAYD_SHARDS: 'true' }],
    ['PARLAYD_QUOTE_WINDOW_MS', { PARLAYD_QUOTE_WINDOW_MS: '0' }],
    ['PARLAYD_MAX_FINALIZING_MS', { PARLAYD_MAX_FINALIZING_MS: '0' }],
    ['PARLAYD_MM_MAX_SOCKETS_PER_MAKER', { PARLAYD_MM_MAX_SOCKETS_PER_MAKER: '0' }],
    ['PARLAYD_MM_FRAMES_PER_S', { PARLAYD_MM_FRAMES_PER_S: '0' }],
    ['PARLAYD_SESSION_TTL_MS', { PARLAYD_SESSION_TTL_MS: '1.5' }],
    ['PARLAYD_WAGER_MIN_MICROS', { PARLAYD_WAGER_MIN_MICROS: '5000', PARLAYD_WAGER_MAX_MICROS: '4000' }],
    ['PARLAYD_JWT_AUDIENCE', { PARLAYD_JWKS_FILE: '/etc/jwks.json', PARLAYD_JWT_ISSUER: 'https://idp.example' }],
    ['PARLAYD_JWT_MAX_AGE_MS', { PARLAYD_JWT_MAX_AGE_MS: '999' }], // below iat's one-second resolution
    ['PARLAYD_JWT_MAX_AGE_MS', { PARLAYD_JWT_MAX_AGE_MS: 'ten minutes' }],
  ];
  // Each case is its own short-lived process with its own data directory, so they can run side by side.
  describe('bad values', { concurrency: 4 }, () => {
    for (const [variable, env] of cases) {
      const setting = Object.entries(env)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(' ');
      it(`${setting} stops the start with one line naming ${variable}`, async () => {
        await assertRefused(env, variable);
      });
    }
  });

  it('a PARLAYD_JWKS_FILE that is missing or not a JWKS stops the start with one line naming it', async () => {
    const jwt = { PARLAYD_JWT_ISSUER: 'https://idp.example', PARLAYD_JWT_AUDIENCE: 'parlayd' };
    await assertRefused({ ...jwt, PARLAYD_JWKS_FILE: join(scratch, 'missing.json') }, 'PARLAYD_JWKS_FILE');
    const notJson = join(scratch, 'not-json.json');
    writeFileSync(notJson, 'keys: []');
    await assertRefused({ ...jwt, PARLAYD_JWKS_FILE: notJson }, 'PARLAYD_JWKS_FILE');
    const notJwks = join(scratch, 'not-jwks.json');
    writeFileSync(notJwks, JSON.stringify({ keys: 'none' }));
    await assertRefused({ ...jwt, PARLAYD_JWKS_FILE: notJwks }, 'PARLAYD_JWKS_FILE');
  });

  it('a bad PARLAYD_ADMIN_TOKEN (too short, or one no bearer header can carry) is named but its value is never printed', async () => {
    for (const secret of ['short-secret', 'a long secret with spaces', `${'x'.repeat(512)}y`]) {
      const line = await assertRefused({ PARLAYD_ADMIN_TOKEN: secret }, 'PARLAYD_ADMIN_TOKEN');
      assert.ok(!line.includes(secret), line);
    }
  });

  it('a non-default 35-byte domain tag is accepted', async () => {
    const server = await startServer({ env: { PARLAYD_MM_DOMAIN_TAG: 'bookiex:mm:ws-auth:v1:staging.test1' } });
    try {
      assert.equal((await client(server.baseUrl).get('/healthz')).status, 200);
    } finally {
      await server.stop();
      removeDataDir(server);
    }
  });

  it('with no PARLAYD_ADMIN_TOKEN a token is generated, printed once on stderr, and works', async () => {
    // An empty value counts as unset.
    const server = await startServer({ env: { PARLAYD_ADMIN_TOKEN: '' } });
    try {
      const line = await server.waitForStderr((l) => l.includes('generated admin token'));
      const token = /: ([A-Za-z0-9_-]{43})$/.exec(line)?.[1];
      assert.ok(token !== undefined, line);
      const user = await loginWallet(server);
      const res = await client(server.baseUrl, token).post('/v1/admin/users/credit', {
        wallet: user.address,
        amount_micros: 1_000_000,
        idempotency_key: 'generated-token',
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(await server.stop(), 0, server.stderr.join('\n'));
      assert.equal(server.stderr.filter((l) => l.includes(token)).length, 1, 'printed exactly once');
      assert.ok(!JSON.stringify(server.logs).includes(token), 'never in the structured log');
    } finally {
      await server.stop();
      removeDataDir(server);
    }
  });
});
