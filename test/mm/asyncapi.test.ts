// The socket's message schemas and their published AsyncAPI 3 document: the rules of the odds field, every
// example true to its schema, the served document generated from the very schemas the gateway validates
// with, and every $ref in it resolving.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { TSchema } from '@sinclair/typebox';
import { client } from '../helpers/http.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import {
  MAKER_TO_SERVER_SCHEMAS,
  MakerToServerMessage,
  QUOTE_REJECT_REASONS,
  SERVER_TO_MAKER_SCHEMAS,
  ServerToMakerMessage,
  isQuoteOdds,
  messageTypeOf,
} from '../../src/contract/mm.js';
import { MESSAGE_EXAMPLES } from '../../src/contract/asyncapi.js';

const ALL_TYPES = [
  'auth_challenge',
  'auth_response',
  'auth_result',
  'heartbeat',
  'pong',
  'AUTH_EXPIRED',
  'rfq',
  'quote',
  'decline',
  'quote_cancel',
  'quote_ack',
  'quote_reject',
  'last_look',
  'last_look_response',
  'rfq_result',
  'error',
  // issue 22: the resumable stream, the quote book, protection
  'resume',
  'resumed',
  'resume_failed',
  'quote_cancel_all',
  'quote_cancelled',
  'quotes_cancelled',
  'protection_tripped',
  'protection_reset',
  'protection_reset_ok',
];

describe('maker message schemas', () => {
  it('odds: a number above 1, at most 100000, with at most 4 decimals', () => {
    const accepted = [1.0001, 1.1, 1.85, 2, 3.1416, 99.9999, 100_000];
    const refused = [1, 0.5, -2, 1.00001, 1.23456, 3.14159, 100_000.0001, 1e21, NaN, Infinity, '1.5', null];
    for (const odds of accepted) assert.equal(isQuoteOdds(odds), true, String(odds));
    for (const odds of refused) assert.equal(isQuoteOdds(odds), false, String(odds));
  });

  it('every message type of contract section 7 has a schema with a type literal, in the right direction', () => {
    const toServer = MAKER_TO_SERVER_SCHEMAS.map(messageTypeOf);
    const toMaker = SERVER_TO_MAKER_SCHEMAS.map(messageTypeOf);
    assert.deepEqual(toServer.sort(), [
      'auth_response',
      'decline',
      'last_look_response',
      'pong',
      'protection_reset',
      'quote',
      'quote_cancel',
      'quote_cancel_all',
      'resume',
    ]);
    assert.deepEqual([...toServer, ...toMaker].sort(), [...ALL_TYPES].sort());
  });

  it('every example validates against its schema, and the unions accept it by direction', () => {
    const toServer = TypeCompiler.Compile(MakerToServerMessage);
    const toMaker = TypeCompiler.Compile(ServerToMakerMessage);
    const directionOf = new Map<string, 'in' | 'out'>([
      ...MAKER_TO_SERVER_SCHEMAS.map((s) => [messageTypeOf(s), 'in'] as const),
      ...SERVER_TO_MAKER_SCHEMAS.map((s) => [messageTypeOf(s), 'out'] as const),
    ]);
    for (const schema of [...MAKER_TO_SERVER_SCHEMAS, ...SERVER_TO_MAKER_SCHEMAS] as TSchema[]) {
      const type = messageTypeOf(schema);
      const examples = MESSAGE_EXAMPLES[type as keyof typeof MESSAGE_EXAMPLES];
      assert.ok(examples.length > 0, `no example for ${type}`);
      const check = TypeCompiler.Compile(schema);
      for (const example of examples) {
        assert.ok(check.Check(example), `${type}: ${JSON.stringify([...check.Errors(example)].map((e) => `${e.path} ${e.message}`))}`);
        const union = directionOf.get(type) === 'in' ? toServer : toMaker;
        assert.ok(union.Check(example), `${type} not accepted by its direction's union`);
      }
    }
  });

  it('maker messages refuse unknown fields; server messages tolerate them (forward compatible)', () => {
    const quote = TypeCompiler.Compile(MakerToServerMessage);
    assert.equal(quote.Check({ ...MESSAGE_EXAMPLES.quote[0], extra: 1 }), false);
    const rfq = TypeCompiler.Compile(ServerToMakerMessage);
    assert.equal(rfq.Check({ ...MESSAGE_EXAMPLES.rfq[0], later_field: 1 }), true);
  });
});

describe('AsyncAPI document of the maker socket', () => {
  let server: TestServer;
  let doc: Record<string, any>;

  before(async () => {
    server = await startServer();
    const res = await client(server.baseUrl).get('/v1/mm/asyncapi.json');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    doc = res.body;
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  it('is AsyncAPI 3.0.0 with one channel at /v1/mm/ws carrying every message type', () => {
    assert.equal(doc['asyncapi'], '3.0.0');
    assert.equal(doc['info'].version, '0.1.0');
    assert.equal(doc['channels'].makerSocket.address, '/v1/mm/ws');
    assert.deepEqual(Object.keys(doc['channels'].makerSocket.messages).sort(), [...ALL_TYPES].sort());
    assert.deepEqual(Object.keys(doc['components'].messages).sort(), [...ALL_TYPES].sort());
    assert.deepEqual(Object.keys(doc['components'].schemas).sort(), [...ALL_TYPES].sort());
  });

  it('server messages are send operations and maker messages receive operations', () => {
    const operations = Object.values(doc['operations']) as Array<{ action: string; messages: Array<{ $ref: string }> }>;
    assert.equal(operations.length, ALL_TYPES.length);
    for (const schema of SERVER_TO_MAKER_SCHEMAS) {
      assert.equal(doc['operations'][`send_${messageTypeOf(schema)}`].action, 'send');
    }
    for (const schema of MAKER_TO_SERVER_SCHEMAS) {
      assert.equal(doc['operations'][`receive_${messageTypeOf(schema)}`].action, 'receive');
    }
    assert.deepEqual(doc['operations'].receive_auth_response.reply.messages, [{ $ref: '#/channels/makerSocket/messages/auth_result' }]);
  });

  it('each payload is the JSON form of the schema the gateway validates with', () => {
    for (const schema of [...MAKER_TO_SERVER_SCHEMAS, ...SERVER_TO_MAKER_SCHEMAS] as TSchema[]) {
      const { $id: _id, ...expected } = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
      assert.deepEqual(doc['components'].schemas[messageTypeOf(schema)], expected);
    }
    const quote = doc['components'].schemas.quote;
    assert.equal(quote.additionalProperties, false);
    assert.equal(quote.properties.odds['x-max-decimals'], 4);
    assert.equal(quote.properties.odds.exclusiveMinimum, 1);
  });

  it('every $ref resolves inside the document', () => {
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
    assert.ok(refs.length > ALL_TYPES.length * 3);
    for (const ref of refs) {
      assert.ok(ref.startsWith('#/'), ref);
      const target = ref
        .slice(2)
        .split('/')
        .reduce<any>((at, part) => at?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
      assert.ok(target !== undefined, `unresolved ${ref}`);
    }
  });

  it('documents the close codes and the error codes', () => {
    const channel = doc['channels'].makerSocket;
    assert.ok(channel['x-close-codes'].some((c: { code: number; reason: string }) => c.code === 1013 && c.reason === 'SLOW_CONSUMER'));
    assert.ok(channel['x-error-codes'].some((c: { code: string }) => c.code === 'QUOTE_NOT_FOUND'));
  });

  it('lists every quote_reject reason, on the channel with its meaning and in the message schema', () => {
    const reasons = Object.keys(QUOTE_REJECT_REASONS);
    assert.deepEqual(
      doc['channels'].makerSocket['x-quote-reject-reasons'].map((r: { reason: string }) => r.reason),
      reasons,
    );
    const schemaReasons = doc['components'].schemas.quote_reject.properties.reason.anyOf.map((r: { const: string }) => r.const);
    assert.deepEqual(schemaReasons, reasons);
  });
});
