// The path router (src/http/router.ts) and the route helpers (src/http/route.ts), in process, without a
// server: a table of method and path against routes shaped like the service's, each row one matching rule.
// The server hands the router uWS's getUrl(), the path without its query string and not percent-decoded, and
// the method upper-cased; it turns not-found into 404 NOT_FOUND and method-not-allowed into 405
// METHOD_NOT_ALLOWED with an Allow header (http/server.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import fc from 'fast-check';
import { defineRoute, json } from '../../src/http/route.js';
import { Router, type Match, type Method } from '../../src/http/router.js';

/** Each route's value is its own "METHOD path", so a match names the route it found. */
const ROUTES: [Method, string][] = [
  ['GET', '/healthz'],
  ['POST', '/v1/rfq'],
  ['POST', '/v1/rfq/unsigned'],
  ['GET', '/v1/rfq/{id}'],
  ['POST', '/v1/rfq/{id}/cancel'],
  ['GET', '/v1/markets/current'],
  ['GET', '/v1/markets/{id}'],
  ['GET', '/v1/user/preferences'],
  ['PATCH', '/v1/user/preferences'],
  ['POST', '/v1/admin/market-makers'],
  ['GET', '/v1/admin/market-makers'],
  ['DELETE', '/v1/admin/market-makers/{address}'],
  ['PUT', '/v1/admin/market-makers/{address}/protection'],
];

function serviceLikeRouter(): Router<string> {
  const router = new Router<string>();
  for (const [method, path] of ROUTES) router.add(method, path, `${method} ${path}`);
  return router;
}

const found = (route: string, params: Record<string, string> = {}): Match<string> => ({ kind: 'found', route, params });
const notAllowed = (...allowed: Method[]): Match<string> => ({ kind: 'method-not-allowed', allowed });
const NOT_FOUND: Match<string> = { kind: 'not-found' };

const LONG_ID = 'x'.repeat(8_192);

const ROWS: { rule: string; method: string; path: string; expected: Match<string> }[] = [
  // Static and parameter segments
  { rule: 'a static path', method: 'GET', path: '/healthz', expected: found('GET /healthz') },
  {
    rule: 'a parameter segment takes any one segment',
    method: 'GET',
    path: '/v1/rfq/r-123',
    expected: found('GET /v1/rfq/{id}', { id: 'r-123' }),
  },
  {
    rule: 'a parameter between static segments',
    method: 'POST',
    path: '/v1/rfq/r-123/cancel',
    expected: found('POST /v1/rfq/{id}/cancel', { id: 'r-123' }),
  },
  {
    rule: 'a parameter named for its route',
    method: 'DELETE',
    path: '/v1/admin/market-makers/0xabc',
    expected: found('DELETE /v1/admin/market-makers/{address}', { address: '0xabc' }),
  },
  {
    rule: 'a static segment wins over a parameter at the same place',
    method: 'GET',
    path: '/v1/markets/current',
    expected: found('GET /v1/markets/current'),
  },
  {
    rule: 'beside it the parameter still matches',
    method: 'GET',
    path: '/v1/markets/42',
    expected: found('GET /v1/markets/{id}', { id: '42' }),
  },
  {
    rule: 'a static segment shadows the parameter for every method (no fallback): 405 with its own methods',
    method: 'GET',
    path: '/v1/rfq/unsigned',
    expected: notAllowed('POST'),
  },
  {
    rule: 'and for deeper paths (no backtracking into the parameter): 404',
    method: 'POST',
    path: '/v1/rfq/unsigned/cancel',
    expected: NOT_FOUND,
  },

  // Methods: 404 NOT_FOUND for an unknown path, 405 METHOD_NOT_ALLOWED (with the allowed ones) for a known one
  {
    rule: 'two methods on one path: each its own route',
    method: 'PATCH',
    path: '/v1/user/preferences',
    expected: found('PATCH /v1/user/preferences'),
  },
  {
    rule: 'a known path, another method: 405 listing the allowed, in the order they were added',
    method: 'PUT',
    path: '/v1/user/preferences',
    expected: notAllowed('GET', 'PATCH'),
  },
  { rule: 'no implicit HEAD for a GET', method: 'HEAD', path: '/healthz', expected: notAllowed('GET') },
  {
    rule: 'methods are matched as given (the server upper-cases them first)',
    method: 'get',
    path: '/healthz',
    expected: notAllowed('GET'),
  },
  { rule: 'an unknown method on a known path: 405', method: 'BREW', path: '/healthz', expected: notAllowed('GET') },
  {
    rule: 'a known parameter path, another method: 405',
    method: 'GET',
    path: '/v1/admin/market-makers/0xabc',
    expected: notAllowed('DELETE'),
  },
  { rule: 'an unknown path: 404', method: 'GET', path: '/v1/nope', expected: NOT_FOUND },
  { rule: 'an unknown path is 404 whatever the method', method: 'BREW', path: '/v1/nope', expected: NOT_FOUND },
  { rule: 'a prefix of routes that is no route itself: 404, not 405', method: 'GET', path: '/v1/admin', expected: NOT_FOUND },
  { rule: 'the root: 404', method: 'GET', path: '/', expected: NOT_FOUND },
  { rule: 'the empty path: 404', method: 'GET', path: '', expected: NOT_FOUND },
  { rule: 'a path longer than its route: 404', method: 'GET', path: '/healthz/more', expected: NOT_FOUND },
  { rule: 'segments are case-sensitive: 404', method: 'GET', path: '/HEALTHZ', expected: NOT_FOUND },

  // Slashes: empty segments are ignored
  { rule: 'a trailing slash is ignored', method: 'GET', path: '/healthz/', expected: found('GET /healthz') },
  { rule: 'after a parameter too', method: 'GET', path: '/v1/rfq/r-1/', expected: found('GET /v1/rfq/{id}', { id: 'r-1' }) },
  {
    rule: 'repeated slashes are one',
    method: 'POST',
    path: '//v1//rfq//r-1///cancel',
    expected: found('POST /v1/rfq/{id}/cancel', { id: 'r-1' }),
  },
  {
    rule: 'so an empty parameter is no segment: the shorter path matches, here with another method (405)',
    method: 'GET',
    path: '/v1/rfq/',
    expected: notAllowed('POST'),
  },

  // Query strings: not the router's (the server reads them apart); one left on is part of the last segment
  { rule: 'a query string left on a static path: 404', method: 'GET', path: '/healthz?verbose=1', expected: NOT_FOUND },
  {
    rule: 'a query string left on a parameter is in its value (the params schema then refuses it)',
    method: 'GET',
    path: '/v1/rfq/r-1?x=1',
    expected: found('GET /v1/rfq/{id}', { id: 'r-1?x=1' }),
  },

  // Percent-encoding: parameters are decoded, static segments are not
  { rule: 'a parameter is percent-decoded', method: 'GET', path: '/v1/rfq/a%20b', expected: found('GET /v1/rfq/{id}', { id: 'a b' }) },
  {
    rule: 'an encoded slash stays inside its parameter',
    method: 'POST',
    path: '/v1/rfq/a%2Fb/cancel',
    expected: found('POST /v1/rfq/{id}/cancel', { id: 'a/b' }),
  },
  {
    rule: 'UTF-8 escapes decode to their character',
    method: 'GET',
    path: '/v1/markets/%E2%82%AC',
    expected: found('GET /v1/markets/{id}', { id: '€' }),
  },
  {
    rule: 'a malformed escape is kept as sent (an id that will not be found), not an error',
    method: 'GET',
    path: '/v1/rfq/%E0%A4%A',
    expected: found('GET /v1/rfq/{id}', { id: '%E0%A4%A' }),
  },
  { rule: 'a lone % is kept as sent', method: 'GET', path: '/v1/rfq/100%', expected: found('GET /v1/rfq/{id}', { id: '100%' }) },
  { rule: 'a static segment is compared as sent, not decoded: 404', method: 'GET', path: '/%68ealthz', expected: NOT_FOUND },
  {
    rule: 'an encoded static segment in front of a parameter: 404',
    method: 'GET',
    path: '/v1/%6Darkets/42',
    expected: NOT_FOUND,
  },

  // Over-long paths: no limit of the router's own (uWS bounds the request line; the params schema the values)
  {
    rule: 'thousands of segments past a route: 404, no error',
    method: 'GET',
    path: '/v1/rfq/r-1' + '/x'.repeat(10_000),
    expected: NOT_FOUND,
  },
  {
    rule: 'a trailing run of thousands of slashes is still ignored',
    method: 'GET',
    path: '/healthz' + '/'.repeat(10_000),
    expected: found('GET /healthz'),
  },
  {
    rule: 'a parameter of 8 KiB is taken whole',
    method: 'GET',
    path: `/v1/rfq/${LONG_ID}`,
    expected: found('GET /v1/rfq/{id}', { id: LONG_ID }),
  },
];

describe('Router.match', () => {
  const router = serviceLikeRouter();
  for (const row of ROWS) {
    it(`${row.rule}: ${row.method} ${row.path.length > 60 ? row.path.slice(0, 40) + `... (${row.path.length} chars)` : row.path}`, () => {
      assert.deepEqual(router.match(row.method, row.path), row.expected);
    });
  }

  it('each match gets params of its own (a caller may keep or change them)', () => {
    const first = router.match('GET', '/v1/rfq/one');
    const second = router.match('GET', '/v1/rfq/two');
    assert.ok(first.kind === 'found' && second.kind === 'found');
    assert.notEqual(first.params, second.params);
    assert.deepEqual([first.params, second.params], [{ id: 'one' }, { id: 'two' }]);
  });
});

describe('Router.add', () => {
  it('a second route for the same method and path is refused (a wiring bug)', () => {
    const router = serviceLikeRouter();
    assert.throws(() => router.add('GET', '/healthz', 'again'), /^Error: duplicate route GET \/healthz$/);
    assert.throws(() => router.add('GET', '/healthz/', 'again'), /duplicate route/, 'a trailing slash is the same path');
  });

  it('a parameter whose name clashes with the one already at its place is refused', () => {
    const router = serviceLikeRouter();
    assert.throws(
      () => router.add('GET', '/v1/rfq/{rfqId}/quotes', 'clash'),
      /^Error: route \/v1\/rfq\/\{rfqId\}\/quotes: parameter \{rfqId\} clashes with \{id\}$/,
    );
  });

  it('the same parameter under another method, or deeper, is the same node', () => {
    const router = serviceLikeRouter();
    router.add('DELETE', '/v1/rfq/{id}', 'DELETE /v1/rfq/{id}');
    router.add('GET', '/v1/rfq/{id}/quotes', 'GET /v1/rfq/{id}/quotes');
    assert.deepEqual(router.match('DELETE', '/v1/rfq/r-1'), found('DELETE /v1/rfq/{id}', { id: 'r-1' }));
    assert.deepEqual(router.match('GET', '/v1/rfq/r-1/quotes'), found('GET /v1/rfq/{id}/quotes', { id: 'r-1' }));
    assert.deepEqual(router.match('PUT', '/v1/rfq/r-1'), notAllowed('GET', 'DELETE'));
  });

  it('a braced segment that is not a name ({1x}, {a-b}) is a static segment', () => {
    const router = new Router<string>();
    router.add('GET', '/odd/{1x}', 'odd');
    router.add('GET', '/odd/{a-b}/x', 'odd dash');
    assert.deepEqual(router.match('GET', '/odd/{1x}'), found('odd'));
    assert.deepEqual(router.match('GET', '/odd/{a-b}/x'), found('odd dash'));
    assert.deepEqual(router.match('GET', '/odd/anything'), NOT_FOUND);
  });

  it('the root path may be a route', () => {
    const router = new Router<string>();
    router.add('GET', '/', 'root');
    assert.deepEqual(router.match('GET', '/'), found('root'));
    assert.deepEqual(router.match('GET', ''), found('root'));
    assert.deepEqual(router.match('POST', '/'), notAllowed('GET'));
  });
});

describe('route.ts', () => {
  it('json(status, body) is a Reply of that status and body, serialized later', () => {
    const body = { ok: true };
    const reply = json(201, body);
    assert.deepEqual(reply, { status: 201, body: { ok: true } });
    assert.equal(reply.body, body, 'not copied');
  });

  it('defineRoute hands back the spec it was given, for the router to store', () => {
    const spec = {
      method: 'GET' as const,
      path: '/v1/things/{id}',
      summary: 'a thing',
      tag: 'things',
      auth: 'none' as const,
      params: Type.Object({ id: Type.String() }),
      responses: { 200: Type.Object({}) },
      handler: () => json(200, {}),
    };
    const route = defineRoute(spec);
    assert.equal(route, spec);
    const router = new Router<typeof route>();
    router.add(route.method, route.path, route);
    assert.deepEqual(router.match('GET', '/v1/things/7'), { kind: 'found', route, params: { id: '7' } });
  });
});

describe('router.ts, any path', () => {
  /**
   * The router as it was before it walked the path in place: split on '/', empty segments dropped, then the
   * same tree walk (statics first, no backtracking). The in-place walk must match it on every path.
   */
  function splitWalk(method: string, path: string): Match<string> {
    interface Node {
      statics: Map<string, Node>;
      param: { name: string; node: Node } | null;
      handlers: Map<string, string>;
    }
    const newNode = (): Node => ({ statics: new Map(), param: null, handlers: new Map() });
    const root = newNode();
    const split = (p: string) => p.split('/').filter((segment) => segment.length > 0);
    for (const [routeMethod, routePath] of ROUTES) {
      let node = root;
      for (const part of split(routePath)) {
        if (part.startsWith('{')) node = (node.param ??= { name: part.slice(1, -1), node: newNode() }).node;
        else node = node.statics.get(part) ?? node.statics.set(part, newNode()).get(part)!;
      }
      node.handlers.set(routeMethod, `${routeMethod} ${routePath}`);
    }
    const params: Record<string, string> = {};
    let node = root;
    for (const segment of split(path)) {
      const next = node.statics.get(segment);
      if (next !== undefined) node = next;
      else if (node.param !== null) {
        let decoded = segment;
        if (segment.includes('%')) {
          try {
            decoded = decodeURIComponent(segment);
          } catch {
            // a malformed escape stays as sent
          }
        }
        params[node.param.name] = decoded;
        node = node.param.node;
      } else return NOT_FOUND;
    }
    if (node.handlers.size === 0) return NOT_FOUND;
    const route = node.handlers.get(method);
    if (route === undefined) return notAllowed(...([...node.handlers.keys()] as Method[]));
    return found(route, params);
  }

  it('matches every path as the split-and-walk router did (empty segments, escapes, unknown segments)', () => {
    const segment = fc.oneof(
      fc.constantFrom(
        '',
        'v1',
        'rfq',
        'unsigned',
        'cancel',
        'markets',
        'current',
        'user',
        'preferences',
        'admin',
        'market-makers',
        'protection',
        'healthz',
      ),
      fc.stringMatching(/^[a-z0-9%-]{0,6}$/),
    );
    // Mostly paths that start like the routes, so that deep matches, parameters and 405s are common.
    const prefix = fc.constantFrom([], ['v1'], ['v1', 'rfq'], ['v1', 'admin', 'market-makers'], ['v1', 'markets'], ['', 'v1', '', 'rfq']);
    const path = fc
      .tuple(prefix, fc.array(segment, { maxLength: 4 }), fc.boolean())
      .map(([head, tail, isTrailing]) => `/${[...head, ...tail].join('/')}${isTrailing ? '/' : ''}`);
    const method = fc.constantFrom('GET', 'POST', 'PATCH', 'PUT', 'DELETE');
    const router = serviceLikeRouter();
    let foundCount = 0;
    fc.assert(
      fc.property(method, path, (m, p) => {
        const match = router.match(m, p);
        if (match.kind === 'found') foundCount++;
        assert.deepEqual(match, splitWalk(m, p));
      }),
      { seed: Number(process.env['FC_SEED'] ?? 35), numRuns: 3_000 },
    );
    assert.ok(foundCount > 100, `${foundCount} paths found a route: the paths reach the routes`);
  });
});
