// Operations (contract section 10): liveness, Prometheus metrics, the generated OpenAPI 3.1 document (which
// must match what the router serves), and graceful shutdown on SIGTERM and SIGINT.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { client, request } from '../helpers/http.js';
import { mainScript } from '../helpers/paths.js';
import { removeDataDir, restartServer, startServer, testServiceEnv, type TestServer } from '../helpers/server.js';
import { loginWallet } from '../helpers/users.js';
import { waitFor } from '../helpers/wait.js';

/** The routes of the foundation (issue 3); other areas add theirs beside them. */
const FOUNDATION_OPERATIONS = [
  'get /healthz',
  'get /metrics',
  'get /v1/openapi.json',
  'post /v1/auth/wallet/challenge',
  'post /v1/auth/wallet',
  'post /v1/auth/session',
  'post /v1/auth/logout',
  'get /v1/user/balance',
  'get /v1/user/preferences',
  'patch /v1/user/preferences',
  'get /v1/markets/current',
  'get /v1/markets/lookup',
  'get /v1/mention-markets',
  'post /v1/admin/users/credit',
  'post /v1/admin/mention-markets',
  'post /v1/admin/markets/{id}/resolve',
];

describe('operations routes', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;

  before(async () => {
    server = await startServer();
    api = client(server.baseUrl);
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  it('GET /healthz is 200 {status: ok}', async () => {
    const res = await api.get('/healthz');
    assert.deepEqual({ status: res.status, body: res.body }, { status: 200, body: { status: 'ok' } });
  });

  it('GET /metrics is for the admin only: 401 without a bearer, 403 with a user token', async () => {
    assert.equal((await api.get('/metrics')).status, 401);
    const user = await loginWallet(server);
    assert.equal((await client(server.baseUrl, user.token).get('/metrics')).status, 403);
  });

  it('PARLAYD_METRICS_PORT: /metrics on a listener of its own, without a token; the main port still wants the admin', async () => {
    const own = await startServer({ env: { PARLAYD_METRICS_PORT: '0' } });
    try {
      const listening = await own.waitForLog((l) => l['msg'] === 'listening');
      const metricsPort = listening['metricsPort'] as number;
      assert.ok(Number.isInteger(metricsPort) && metricsPort > 0 && metricsPort !== own.port, `metricsPort ${metricsPort}`);
      const scraped = await request(`http://127.0.0.1:${metricsPort}`, 'GET', '/metrics');
      assert.equal(scraped.status, 200);
      assert.match(scraped.body as string, /^# TYPE parlayd_http_request_seconds histogram$/m);
      const other = await request(`http://127.0.0.1:${metricsPort}`, 'GET', '/v1/contests');
      assert.deepEqual({ status: other.status, code: other.body.code }, { status: 404, code: 'NOT_FOUND' });
      assert.equal((await client(own.baseUrl).get('/metrics')).status, 401);
    } finally {
      assert.equal(await own.stop(), 0);
      removeDataDir(own);
    }
  });

  it('GET /metrics is Prometheus text with the HTTP latency histogram by route', async () => {
    await api.get('/healthz');
    await api.get('/v1/no-such-route');
    const res = await client(server.baseUrl, server.adminToken).get('/metrics');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = res.body as string;
    assert.match(text, /^# TYPE parlayd_http_request_seconds histogram$/m);
    assert.match(
      text,
      /^parlayd_http_request_seconds_count\{(?=[^}]*route="\/healthz")(?=[^}]*method="GET")(?=[^}]*status="200")[^}]*\} [1-9]\d*$/m,
    );
    assert.match(text, /^parlayd_http_request_seconds_bucket\{[^}]*le="\+Inf"[^}]*\} \d+$/m);
    // Unknown paths share one label value, so a scanner cannot grow the label set.
    assert.match(text, /^parlayd_http_request_seconds_count\{(?=[^}]*route="unmatched")(?=[^}]*status="404")[^}]*\} [1-9]\d*$/m);
    assert.ok(!text.includes('/v1/no-such-route'));
    assert.match(text, /^parlayd_http_errors_total\{code="NOT_FOUND"\} [1-9]\d*$/m);
    // Every sample line is `name{labels} value`.
    for (const line of text.split('\n')) {
      if (line === '' || line.startsWith('#')) continue;
      assert.match(line, /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? (-?[0-9.e+-]+|NaN|[+-]Inf)$/, line);
    }
  });

  it('GET /v1/openapi.json is an OpenAPI 3.1 document with every route, its components and its security', async () => {
    const res = await api.get('/v1/openapi.json');
    assert.equal(res.status, 200);
    const doc = res.body;
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.title, 'parlayd');
    assert.equal(typeof doc.info.version, 'string');
    const operations = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method} ${path}`),
    );
    for (const operation of FOUNDATION_OPERATIONS) assert.ok(operations.includes(operation), `${operation} is documented`);
    for (const name of ['ErrorBody', 'Market', 'Session', 'Balance', 'Preferences']) {
      assert.equal(typeof doc.components.schemas[name], 'object', `components.schemas.${name}`);
    }
    assert.deepEqual(doc.components.securitySchemes, { bearer: { type: 'http', scheme: 'bearer' } });
    assert.deepEqual(doc.paths['/v1/user/balance'].get.security, [{ bearer: [] }]);
    assert.equal(doc.paths['/v1/markets/current'].get.security, undefined);
    assert.deepEqual(
      doc.paths['/v1/markets/lookup'].get.parameters.map((p: { name: string; in: string; required: boolean }) => [
        p.name,
        p.in,
        p.required,
      ]),
      [
        ['asset', 'query', true],
        ['duration_secs', 'query', true],
        ['at_ms', 'query', true],
      ],
    );
    assert.deepEqual(doc.paths['/v1/admin/markets/{id}/resolve'].post.parameters[0].in, 'path');
    assert.equal(doc.paths['/v1/user/preferences'].patch.requestBody.content['application/json'].schema.additionalProperties, false);
  });

  it('every $ref in the OpenAPI document points at a component that exists', async () => {
    const doc = (await api.get('/v1/openapi.json')).body;
    const refs: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(walk);
      if (node === null || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string') refs.push(value);
        else walk(value);
      }
    };
    walk(doc);
    assert.ok(refs.length > 0);
    for (const ref of refs) {
      const match = /^#\/components\/schemas\/(.+)$/.exec(ref);
      assert.ok(match !== null && doc.components.schemas[match[1]!] !== undefined, `${ref} resolves`);
    }
  });

  it('every documented operation is served by the router (no 404 NOT_FOUND or 405)', async () => {
    const doc = (await api.get('/v1/openapi.json')).body;
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(ops)) {
        // No credentials and no body: whatever the route says, it must not be "no such route". A path parameter
        // is a 1, but the dashboard's file name, which must name one of its files.
        const res = await request(server.baseUrl, method.toUpperCase(), path.replace('{asset}', 'dashboard.js').replace(/\{[^}]+\}/g, '1'));
        assert.ok(
          res.status !== 405 && !(res.status === 404 && (res.body as { code?: string }).code === 'NOT_FOUND'),
          `${method.toUpperCase()} ${path}: ${res.status} ${JSON.stringify(res.body)}`,
        );
      }
    }
  });
});

describe('graceful shutdown', () => {
  it('SIGTERM stops the service with exit code 0, even with an idle client connected', async () => {
    const server = await startServer();
    try {
      const user = await loginWallet(server);
      // A keep-alive connection that stays open and idle.
      const idle = net.connect(server.port, '127.0.0.1');
      await new Promise<void>((resolve, reject) => idle.once('connect', resolve).once('error', reject));
      idle.on('error', () => {}); // the server may reset it while exiting
      assert.equal(await server.stop(), 0, server.stderr.join('\n'));
      idle.destroy();
      assert.ok(server.logs.some((entry) => entry['msg'] === 'stopping' && entry['signal'] === 'SIGTERM'));
      // What was acknowledged before the signal is there on the next start.
      const next = await restartServer(server);
      try {
        assert.equal((await client(next.baseUrl, user.token).get('/v1/user/balance')).status, 200);
      } finally {
        await next.stop();
      }
    } finally {
      removeDataDir(server);
    }
  });

  it('requests on connections kept alive through a SIGTERM are answered or refused 503, never 500; acknowledged credits are kept', async () => {
    const server = await startServer();
    try {
      const user = await loginWallet(server);
      const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
      const body = () => JSON.stringify({ wallet: user.address, amount_micros: 1_000, idempotency_key: randomUUID() });
      const creditOnce = () =>
        new Promise<number>((resolve, reject) => {
          const req = http.request(
            {
              host: '127.0.0.1',
              port: server.port,
              path: '/v1/admin/users/credit',
              method: 'POST',
              agent,
              headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
            },
            (res) => res.resume().on('end', () => resolve(res.statusCode!)),
          );
          req.on('error', reject);
          req.end(body());
        });
      const statuses: number[] = [];
      // Eight keep-alive connections crediting back to back until theirs is closed (a 503 says it will be).
      const loop = async () => {
        for (;;) {
          const status = await creditOnce().catch(() => null);
          if (status === null) return;
          statuses.push(status);
          if (status !== 200) return;
        }
      };
      const loops = Array.from({ length: 8 }, loop);
      await sleep(150);
      // On a failure, the errors the service logged say why it stopped as it did.
      const whyStopped = () =>
        [...server.stderr, ...server.logs.filter((e) => (e['level'] as number) >= 50).map((e) => JSON.stringify(e))].join('\n');
      assert.equal(await server.stop(), 0, whyStopped());
      await Promise.all(loops);
      agent.destroy();
      assert.ok(statuses.filter((st) => st === 200).length > 0, 'credits went through before the signal');
      assert.deepEqual(
        statuses.filter((st) => st !== 200 && st !== 503),
        [],
        'no request reached a closing store',
      );
      assert.equal(server.logs.filter((entry) => entry['msg'] === 'unhandled error in request').length, 0);
      const acknowledgedMicros = BigInt(statuses.filter((st) => st === 200).length * 1_000);
      const next = await restartServer(server);
      try {
        const available = BigInt((await client(next.baseUrl, user.token).get('/v1/user/balance')).body.available_micros as string);
        // Every acknowledged credit is there; at most the eight in flight at the stop went through unacknowledged.
        assert.ok(
          available >= acknowledgedMicros && available <= acknowledgedMicros + 8_000n,
          `${available} for ${acknowledgedMicros} acknowledged`,
        );
      } finally {
        await next.stop();
      }
    } finally {
      removeDataDir(server);
    }
  });

  it('SIGINT stops the service with exit code 0', async () => {
    const server = await startServer();
    try {
      server.process.kill('SIGINT');
      assert.equal(await server.exited(), 0, server.stderr.join('\n'));
      assert.ok(server.logs.some((entry) => entry['msg'] === 'stopping' && entry['signal'] === 'SIGINT'));
      // Listening means the verify threads have loaded (a stop cannot catch one mid-load), and says with what.
      assert.ok(server.logs.some((entry) => entry['msg'] === 'listening' && entry['recoverBackend'] === 'native'));
    } finally {
      await server.stop();
      removeDataDir(server);
    }
  });

  it('a SIGTERM during start-up stops the service once it has started, with exit code 0', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'parlayd-test-'));
    try {
      const child = spawn(process.execPath, [mainScript], {
        env: { PATH: process.env['PATH'] ?? '', ...testServiceEnv(dataDir) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
      // LMDB's file appears at start-up's first step (app.ts opens the store), after main.ts listens for
      // signals; the shards and verify threads are still to start. Before, a signal then killed the process.
      await waitFor(() => existsSync(join(dataDir, 'data.mdb')), {
        timeoutMs: 15_000,
        intervalMs: 1,
        what: 'the service to open its store',
      });
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
      const messages = stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { msg: string }).msg);
      assert.ok(messages.indexOf('listening') >= 0 && messages.indexOf('listening') < messages.indexOf('stopping'), messages.join(', '));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
