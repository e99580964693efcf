// Main thread, built once on first ask. The AsyncAPI 3.0 document of the market-maker socket, generated from
// the typebox schemas of contract/mm.ts: the same objects the gateway validates maker messages with, so the
// document cannot drift from what the server enforces. Served at GET /v1/mm/asyncapi.json.
import type { TSchema } from '@sinclair/typebox';
import { CLOSE, MAKER_ERRORS, MAKER_WS_PATH, MAX_MAKER_FRAME_BYTES, MAX_UNANSWERED_HEARTBEATS } from './maker-protocol.js';
import {
  MAKER_TO_SERVER_SCHEMAS,
  QUOTE_REJECT_REASONS,
  SERVER_TO_MAKER_SCHEMAS,
  messageTypeOf,
  type MakerToServerMessage,
  type ServerToMakerMessage,
} from './mm.js';

type Json = Record<string, unknown>;

const CHANNEL = 'makerSocket';
const UUID_EXAMPLE = '3f1c2a9e-8b7d-4c6a-9e2f-1a2b3c4d5e6f';

/** One example per message type; a test validates each against its schema, so they stay true. */
export const MESSAGE_EXAMPLES: { [K in MakerToServerMessage['type'] | ServerToMakerMessage['type']]: Json[] } = {
  auth_challenge: [{ type: 'auth_challenge', nonce: 'ab'.repeat(32), timestamp: 1763800000 }],
  auth_response: [
    {
      type: 'auth_response',
      address: '0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A',
      signature:
        '0xd8decbe3a3667ca4ecd35e5d215f9e7851b7a9a8533938754a2f622681da6cc97b0679f0abf75288c5de0504bec9130e7ea484f0abc9d045df4df1d73a1626001b',
    },
  ],
  auth_result: [
    { type: 'auth_result', success: true, session_token: 'q7Xc...base64url...', expires_at_ms: 1763803600000 },
    { type: 'auth_result', success: false, reason: 'INVALID_SIGNATURE' },
  ],
  heartbeat: [{ type: 'heartbeat', seq: 7, ts: 1763800015000 }],
  pong: [{ type: 'pong', ts: 1763800015000 }],
  AUTH_EXPIRED: [{ type: 'AUTH_EXPIRED', seq: 240, expired_at_ms: 1763803600000 }],
  rfq: [
    {
      type: 'rfq',
      seq: 8,
      request_id: UUID_EXAMPLE,
      legs: [
        { market_id: 42, direction: 'up' },
        { market_id: 43, direction: 'down' },
      ],
      wager_micros: '5000000',
      order_type: 2,
      quote_deadline_ms: 1763800000300,
      expires_at_ms: 1763800005000,
      taker: null,
    },
  ],
  quote: [{ type: 'quote', request_id: UUID_EXAMPLE, quote_id: 'q-1', odds: 3.85, max_wager_micros: '100000000', last_look: false }],
  decline: [{ type: 'decline', request_id: UUID_EXAMPLE }],
  quote_cancel: [{ type: 'quote_cancel', request_id: UUID_EXAMPLE, quote_id: 'q-1' }],
  quote_ack: [{ type: 'quote_ack', seq: 9, request_id: UUID_EXAMPLE, quote_id: 'q-1', received_at_ms: 1763800000112 }],
  quote_reject: [{ type: 'quote_reject', request_id: UUID_EXAMPLE, quote_id: 'q-1', reason: 'RFQ_CLOSED' }],
  last_look: [{ type: 'last_look', request_id: UUID_EXAMPLE, quote_id: 'q-1', fill_wager_micros: '5000000', deadline_ms: 1763800000500 }],
  last_look_response: [{ type: 'last_look_response', request_id: UUID_EXAMPLE, quote_id: 'q-1', accept: true }],
  rfq_result: [
    { type: 'rfq_result', request_id: UUID_EXAMPLE, outcome: 'won', quote_id: 'q-1', odds: 3.85, filled_wager_micros: '5000000' },
    { type: 'rfq_result', request_id: UUID_EXAMPLE, outcome: 'lost' },
  ],
  resume: [{ type: 'resume', session_token: "q7Xc...the previous socket's token...", last_seq: 41 }],
  resumed: [{ type: 'resumed', seq: 6, replayed: 4, next_seq: 7 }],
  resume_failed: [
    { type: 'resume_failed', seq: 2, reason: 'SEQ_TOO_OLD', oldest_seq: 120 },
    { type: 'resume_failed', seq: 2, reason: 'UNKNOWN_SESSION', oldest_seq: null },
  ],
  quote_cancel_all: [{ type: 'quote_cancel_all' }],
  quote_cancelled: [{ type: 'quote_cancelled', seq: 10, request_id: UUID_EXAMPLE, quote_id: 'q-1' }],
  quotes_cancelled: [{ type: 'quotes_cancelled', seq: 11, count: 3 }],
  protection_tripped: [{ type: 'protection_tripped', seq: 12, reason: 'MAX_FILLS' }],
  protection_reset: [{ type: 'protection_reset' }],
  protection_reset_ok: [{ type: 'protection_reset_ok', seq: 13 }],
  error: [
    {
      type: 'error',
      code: 'VALIDATION_FAILED',
      message: 'quote failed validation',
      request_id: UUID_EXAMPLE,
      quote_id: 'q-1',
      details: [{ path: '/odds', message: 'at most 4 decimals' }],
    },
  ],
};

/** For a message the server answers, the answers (AsyncAPI operation reply). */
const REPLIES: Partial<Record<string, string[]>> = {
  auth_challenge: ['auth_response'],
  auth_response: ['auth_result'],
  heartbeat: ['pong'],
  quote: ['quote_ack', 'quote_reject'],
  quote_cancel: ['quote_cancelled', 'error'],
  quote_cancel_all: ['quotes_cancelled'],
  resume: ['resumed', 'resume_failed'],
  protection_reset: ['protection_reset_ok'],
  last_look: ['last_look_response'],
};

export function buildAsyncApi(version: string): Json {
  const schemas: Json = {};
  const messages: Json = {};
  const channelMessages: Json = {};
  const operations: Json = {};
  const add = (schema: TSchema, action: 'send' | 'receive') => {
    const type = messageTypeOf(schema);
    schemas[type] = toJsonSchema(schema);
    messages[type] = {
      name: type,
      title: type,
      summary: typeof schema.description === 'string' ? schema.description : type,
      contentType: 'application/json',
      payload: { $ref: `#/components/schemas/${type}` },
      examples: (MESSAGE_EXAMPLES[type as keyof typeof MESSAGE_EXAMPLES] ?? []).map((payload) => ({ payload })),
    };
    channelMessages[type] = { $ref: `#/components/messages/${type}` };
    const operation: Json = {
      action,
      title: `${action === 'send' ? 'Server sends' : 'Server receives'} ${type}`,
      channel: { $ref: `#/channels/${CHANNEL}` },
      messages: [{ $ref: `#/channels/${CHANNEL}/messages/${type}` }],
    };
    const replies = REPLIES[type];
    if (replies !== undefined) {
      operation['reply'] = {
        channel: { $ref: `#/channels/${CHANNEL}` },
        messages: replies.map((r) => ({ $ref: `#/channels/${CHANNEL}/messages/${r}` })),
      };
    }
    operations[`${action}_${type}`] = operation;
  };
  for (const schema of SERVER_TO_MAKER_SCHEMAS) add(schema, 'send');
  for (const schema of MAKER_TO_SERVER_SCHEMAS) add(schema, 'receive');

  return {
    asyncapi: '3.0.0',
    info: {
      title: 'parlayd market-maker socket',
      version,
      description: [
        'Market makers connect here, authenticate with an EIP-191 signature of a server challenge, then receive',
        'RFQs and answer with quotes. Text frames, one JSON object each, discriminated by `type`.',
        'Operations are described from the server: `send` = server to maker, `receive` = maker to server.',
        'Signed bytes (75): the 35-byte ASCII domain tag, the 32 nonce bytes (hex-decoded), the challenge',
        'timestamp as u64 little-endian; personal-sign them ("\\x19Ethereum Signed Message:\\n75" prefix).',
        'Limits: auth within 10 s of connecting, challenge valid 30 s, heartbeat every 15 s,',
        `${MAX_UNANSWERED_HEARTBEATS} unanswered heartbeats close the socket, session 1 h, frames <= ${MAX_MAKER_FRAME_BYTES} bytes.`,
        'Every server message after a successful auth_result carries `seq`, gapless from 1 per socket; `resume`',
        'replays what a lost socket was sent (docs/maker-protocol.md section 3.5).',
        'See docs/maker-protocol.md for the walkthrough and a worked example.',
      ].join(' '),
    },
    defaultContentType: 'application/json',
    servers: {
      parlayd: {
        host: '{host}',
        protocol: 'ws',
        description: 'The parlayd service: same host and port as the HTTP API.',
        variables: { host: { default: 'localhost:8080', description: 'host:port of the environment' } },
      },
    },
    channels: {
      [CHANNEL]: {
        address: MAKER_WS_PATH,
        title: 'Market-maker WebSocket',
        description: 'One socket per maker connection; a maker may hold several.',
        servers: [{ $ref: '#/servers/parlayd' }],
        messages: channelMessages,
        'x-close-codes': Object.values(CLOSE).map(({ code, reason }) => ({ code, reason })),
        'x-error-codes': Object.entries(MAKER_ERRORS).map(([code, e]) => ({ code, closes: e.closes, message: e.message })),
        'x-quote-reject-reasons': Object.entries(QUOTE_REJECT_REASONS).map(([reason, meaning]) => ({ reason, meaning })),
      },
    },
    operations,
    components: { schemas, messages },
  };
}

/** Plain JSON Schema: typebox's symbol keys go, `$id` goes (the component name replaces it). */
function toJsonSchema(schema: TSchema): Json {
  const copy = JSON.parse(JSON.stringify(schema)) as Json;
  delete copy['$id'];
  return copy;
}
