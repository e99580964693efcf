// docs/api.md is what API users build from: every route the server serves (its own OpenAPI document) and
// every error code of the contract's table must be in it, and it must stand alone (nothing outside the
// repository). A route or code added without its line in the document fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ERROR_TABLE } from '../../src/lib/errors.js';
import { client } from '../helpers/http.js';
import { repoRoot } from '../helpers/paths.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';

const doc = readFileSync(path.join(repoRoot, 'docs', 'api.md'), 'utf8');

describe('docs/api.md', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  it('names every route of the OpenAPI document, by method and path', async () => {
    const openapi = await client(server.baseUrl).get<{ paths: Record<string, Record<string, unknown>> }>('/v1/openapi.json');
    assert.equal(openapi.status, 200);
    const routes = Object.entries(openapi.body.paths).flatMap(([route, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${route}`),
    );
    assert.ok(routes.length > 30, `${routes.length} routes`);
    // `GET /v1/rfq/{id}` followed by the end of the code span or its query: not a prefix of a longer path.
    const missing = routes.filter((route) => !new RegExp('`' + route.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '[`?\\[]').test(doc));
    assert.deepEqual(missing, []);
  });

  it("has a row for every code of the contract's error table", () => {
    const missing = Object.keys(ERROR_TABLE).filter((code) => !new RegExp(`\\| (\\S+ / )?${code}( / \\S+)? \\|`).test(doc));
    assert.deepEqual(missing, []);
  });

  it('sends readers nowhere outside the repository', () => {
    assert.ok(!doc.includes('../'), 'a path that leaves the repository');
  });
});
