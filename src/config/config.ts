// Runs on the main thread at start (and in workers, from the object the main thread hands them).
// Configuration comes only from PARLAYD_* variables (contract section 10). The typebox schema below is the
// single list of variables, their defaults and their ranges; a bad value stops the process with one line
// that names the variable.
import { availableParallelism } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { convertFlatStrings } from '../contract/convert-strings.js';
import { parseAddress } from '../crypto/address.js';
import { DEV_DOMAIN_TAG, DOMAIN_TAG_PATTERN } from '../crypto/maker-challenge.js';

const Ms = (defaultMs: number, minimumMs = 1) => Type.Integer({ minimum: minimumMs, maximum: 2_147_483_647, default: defaultMs });
const defaultThreads = Math.max(1, availableParallelism() - 1);

/** A bearer token's characters (RFC 6750 b64token) and its most: what http/bearer.ts reads, and the admin token must be. */
export const BEARER_TOKEN_CHARS = 'A-Za-z0-9._~+/=-';
export const BEARER_TOKEN_MAX_CHARS = 512;

export const EnvSchema = Type.Object({
  PARLAYD_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  PARLAYD_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  // A listener of its own for GET /metrics, without a token (0 = any free port, printed at start); unset:
  // none, and /metrics is served on the main port behind the admin token only.
  PARLAYD_METRICS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  PARLAYD_DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  // The LMDB map's size, and the room new work may use (store/db.ts assertRoom): past 7/8 of it new RFQs,
  // credits and entries get 503 OVERLOADED, and the last 1/8 is kept for ending accepted work. lmdb-js grows
  // the map itself past this size, so it is a limit we keep, not LMDB's. 1 TiB at most: address space.
  PARLAYD_LMDB_MAP_SIZE_MB: Type.Integer({ minimum: 1, maximum: 1_048_576, default: 8192 }),
  // A token the bearer parser can read back (http/bearer.ts): outside its characters or length, the admin
  // could never authenticate, so the start refuses it.
  PARLAYD_ADMIN_TOKEN: Type.Optional(Type.String({ pattern: `^[${BEARER_TOKEN_CHARS}]{16,${BEARER_TOKEN_MAX_CHARS}}$` })),
  PARLAYD_SHARDS: Type.Integer({ minimum: 1, maximum: 64, default: defaultThreads }),
  // Which engine the RFQ shards run (docs/engine.md): `lmdb`, each shard a synchronous LMDB client; `journal`,
  // each shard an owner of its accounts in memory with a journal for durability and LMDB as its read model.
  PARLAYD_ENGINE: Type.Union([Type.Literal('lmdb'), Type.Literal('journal')], { default: 'journal' }),
  PARLAYD_VERIFY_THREADS: Type.Integer({ minimum: 1, maximum: 64, default: defaultThreads }),
  // The cluster (docs/scaling.md). Unset: the one process the service always was, with no NATS. Set: the
  // process joins a cluster at these NATS servers (comma-separated) as PARLAYD_ROLE, named PARLAYD_NODE_ID on
  // subjects; the coordinator is given the PARLAYD_PARTITION_MAP (each owner's partitions, ';'-separated:
  // cluster/partitions.ts), which gateways and shard nodes take from it (cluster/map-source.ts). A shard node
  // reads its own variables besides (shard-node-main.ts).
  PARLAYD_NATS_URL: Type.Optional(Type.String({ minLength: 1 })),
  // The coordinator also serves HTTP and makers itself, as a gateway with state: a cluster of one front
  // process is a coordinator and its shard nodes.
  PARLAYD_ROLE: Type.Union([Type.Literal('coordinator'), Type.Literal('gateway'), Type.Literal('shard')], { default: 'coordinator' }),
  PARLAYD_NODE_ID: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', default: 'gateway-1' }),
  // Unset: the coordinator holds every partition's one owner ('0-255'); a gateway takes the coordinator's map.
  PARLAYD_PARTITION_MAP: Type.Optional(Type.String({ minLength: 1 })),
  PARLAYD_MM_DOMAIN_TAG: Type.String({
    // Contract section 7: the tag is exactly 35 printable ASCII bytes or the service refuses to start.
    pattern: DOMAIN_TAG_PATTERN,
    default: DEV_DOMAIN_TAG,
  }),
  PARLAYD_MM_AUTH_TIMEOUT_MS: Ms(10_000),
  PARLAYD_MM_CHALLENGE_TTL_MS: Ms(30_000),
  PARLAYD_MM_HEARTBEAT_MS: Ms(15_000),
  PARLAYD_MM_SESSION_TTL_MS: Ms(3_600_000),
  PARLAYD_MM_MAX_BUFFERED_BYTES: Type.Integer({ minimum: 1024, maximum: 1 << 30, default: 1 << 20 }),
  // Maker sockets awaiting authentication from one remote address. Without it one client could hold every
  // place of the service-wide bound (1024) and lock all makers out; a maker needs a few at once at most
  // (one per connection it is opening), so 16 leaves room for a reconnect burst. Above the service-wide
  // bound it would mean nothing.
  PARLAYD_MM_MAX_PENDING_AUTH_PER_IP: Type.Integer({ minimum: 1, maximum: 65_536, default: 16 }),
  // Maker sockets awaiting authentication in all (each holds a timer, a challenge and a socket). When it is
  // full the oldest one still waiting for its auth_response is closed (AUTH_EVICTED) to make room, so idle
  // sockets from many addresses cannot lock makers out; only if every one is being verified is the upgrade
  // refused (503).
  PARLAYD_MM_MAX_PENDING_AUTH: Type.Integer({ minimum: 1, maximum: 65_536, default: 1024 }),
  // The same per network (IPv4 /24, IPv6 /48, lib/caller-network.ts): 16 addresses of one block may not
  // take more than 4 callers' worth of places. Past it the upgrade gets 429 RATE_LIMITED.
  PARLAYD_MM_MAX_PENDING_AUTH_PER_NETWORK: Type.Integer({ minimum: 1, maximum: 65_536, default: 64 }),
  // Under pressure (more than half of PARLAYD_MM_MAX_PENDING_AUTH in use) a new socket gets this long to
  // authenticate instead of PARLAYD_MM_AUTH_TIMEOUT_MS: a maker's client signs and answers in milliseconds,
  // so 2 s costs it nothing, and a flood of idle sockets turns over 5 times faster.
  PARLAYD_MM_PRESSURE_AUTH_TIMEOUT_MS: Ms(2_000),
  // Authenticated sockets of one maker address at once. Each gets every RFQ and may quote and be offered last
  // looks: without a cap one maker's sockets multiplied what it could make an RFQ hold. A maker needs one or
  // two (a second while it moves to a new one); the next one past it is closed TOO_MANY_SOCKETS.
  PARLAYD_MM_MAX_SOCKETS_PER_MAKER: Type.Integer({ minimum: 1, maximum: 1_024, default: 4 }),
  // Frames one maker socket may send: a token bucket (mm/frame-rate.ts), past it the socket is closed 1008
  // RATE_LIMITED. Each frame costs a parse and a schema check on the main thread; a bot quoting every RFQ
  // at the 2,000/s target sends 2,000/s, so 10,000/s with bursts of 20,000 leaves it five times the room.
  PARLAYD_MM_FRAMES_PER_S: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10_000 }),
  PARLAYD_MM_FRAME_BURST: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 20_000 }),
  // Refused maker logins and sockets closed before auth are logged as one info line per this interval with
  // their counts by reason (each one at debug level): anyone can cause them at will.
  PARLAYD_MM_REFUSAL_LOG_INTERVAL_MS: Ms(10_000),
  // How long a maker stream's frames are held for a resume, and how many at most per stream. The
  // count bounds memory (~40 bytes of index per frame, its own text at most 256 bytes a frame outside V8's
  // heap, rfq texts once for every ring: mm/stream.ts): at high RFQ rates it, not the time, bounds what can
  // be replayed.
  PARLAYD_MM_REPLAY_MS: Ms(30_000),
  PARLAYD_MM_REPLAY_MAX_MESSAGES: Type.Integer({ minimum: 16, maximum: 1_000_000, default: 4096 }),
  PARLAYD_SESSION_TTL_MS: Ms(86_400_000),
  PARLAYD_LOGIN_NONCE_TTL_MS: Ms(300_000),
  PARLAYD_QUOTE_WINDOW_MS: Ms(300),
  PARLAYD_LAST_LOOK_MS: Ms(200),
  // Longest an RFQ spends in last looks, from the first one offered (rfq/last-look.ts): then the best firm
  // quote left fills, or it fails MAKER_REJECTED. Without it unanswered last looks held a signed RFQ, its
  // wager reserved, up to its expiry: a free option for the makers. 1 s is five default last looks.
  PARLAYD_MAX_FINALIZING_MS: Ms(1_000),
  // Longest an RFQ's create is held to share one durable commit with its terminal write, when the taker's
  // answer waits for the result (wait_ms): one fsync per RFQ instead of two. 0 commits every create at once.
  PARLAYD_CREATE_COALESCE_MS: Type.Integer({ minimum: 0, maximum: 1000, default: 10 }),
  PARLAYD_WAGER_MIN_MICROS: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, default: 1_000_000 }),
  PARLAYD_WAGER_MAX_MICROS: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, default: 10_000_000_000 }),
  PARLAYD_JWKS_FILE: Type.Optional(Type.String({ minLength: 1 })),
  PARLAYD_JWT_ISSUER: Type.Optional(Type.String({ minLength: 1 })),
  PARLAYD_JWT_AUDIENCE: Type.Optional(Type.String({ minLength: 1 })),
  // Oldest id_token (by its iat) that logs in: a token that leaked from a log or a browser cannot be replayed
  // for its whole lifetime. At least 1 s: iat counts whole seconds, so a token minted at once may be 999 ms old.
  PARLAYD_JWT_MAX_AGE_MS: Ms(600_000, 1_000),
  PARLAYD_LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  // Price markets: configured assets x window durations (contract section 5).
  PARLAYD_PRICE_ASSETS: Type.String({ pattern: '^[A-Z0-9]{1,16}(,[A-Z0-9]{1,16})*$', default: 'BTC,ETH,SOL' }),
  PARLAYD_PRICE_DURATIONS_SECS: Type.String({ pattern: '^[1-9][0-9]{0,6}(,[1-9][0-9]{0,6})*$', default: '300,900,3600' }),
  // Sign-In with Ethereum (EIP-4361): the domain and URI users see in the message they sign.
  PARLAYD_SIWE_DOMAIN: Type.String({ pattern: '^[A-Za-z0-9.-]+(:[0-9]{1,5})?$', default: 'localhost' }),
  PARLAYD_SIWE_URI: Type.String({ pattern: '^https?://\\S+$', default: 'http://localhost' }),
  PARLAYD_SIWE_CHAIN_ID: Type.Integer({ minimum: 1, maximum: 2_147_483_647, default: 1 }),
  // Bounds (STYLE: put a limit on everything). Hitting one is a coded error, never a slowdown.
  PARLAYD_MAX_ACTIVE_RFQS_PER_SHARD: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 50_000 }),
  PARLAYD_VERIFY_MAX_QUEUE: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10_000 }),
  // Requests held open by wait_ms at once (each a timer and an open socket); past it, 503 before anything starts.
  PARLAYD_MAX_WAITERS: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 16_384 }),
  // Front-door shedding of RFQ creates (http/load-shedder.ts; docs/reliability.md, "Overload"): past either,
  // a create gets 503 OVERLOADED (Retry-After: 1) before its token, body or signature is looked at.
  // In flight: creates admitted and not yet answered, wait_ms included. At the 2,000/s target an RFQ whose
  // makers are slow is held up to its quote window and last look (0.5 s): ~1,000; twice that is the default.
  PARLAYD_MAX_IN_FLIGHT_CREATES: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 2_048 }),
  // How far behind the main thread may be (ms; 0 = never shed by it). At 2,000/s its turns take ~1 ms and a
  // young-generation GC a few; 50 ms is well past those, and bounds what a queue on this thread adds to an answer.
  PARLAYD_MAX_EVENT_LOOP_DELAY_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 50 }),
  // Bodies still arriving (http/unread-bodies.ts). A create's body may take this long from its
  // request (then its connection is closed unanswered): a client sends its ~500 bytes with the headers, so
  // 1 s is room for a slow link, and a trickler's socket turns over 10 times faster than uWS's 10 s timeout.
  PARLAYD_CREATE_BODY_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 10_000, default: 1_000 }),
  // Creates whose body is still arriving, per principal and per IPv4 /24 or IPv6 /48; past either, 429.
  PARLAYD_MAX_UNREAD_CREATES_PER_CALLER: Type.Integer({ minimum: 1, maximum: 65_536, default: 16 }),
  PARLAYD_MAX_UNREAD_CREATES_PER_NETWORK: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 256 }),
  // Bytes that bodies still arriving may grow to (each its Content-Length, or the route's limit when
  // chunked), per IP (an IPv6 caller per /64) and per /24 or /48; past either, 429. At least 2 MiB: the
  // largest body (a contest with its image, ~1.4 MB) must fit. 4 MiB is 64 full 64 KiB bodies at once.
  PARLAYD_BODY_BYTES_IN_PROGRESS_PER_IP: Type.Integer({ minimum: 2 << 20, maximum: 1 << 30, default: 4 << 20 }),
  PARLAYD_BODY_BYTES_IN_PROGRESS_PER_NETWORK: Type.Integer({ minimum: 2 << 20, maximum: 1 << 30, default: 32 << 20 }),
  // Per caller (user or maker session, or IP when unauthenticated); 0 turns rate limiting off.
  PARLAYD_RATE_LIMIT_PER_S: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 2_000 }),
  PARLAYD_RATE_LIMIT_BURST: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 4_000 }),
  // Oracle (contract section 12). Addresses whose signed price reports are accepted, comma-separated (each
  // checked like any address input: with or without 0x, mixed case only as its EIP-55 checksum); unset =
  // only the admin's unsigned route. At most 64: each is a set lookup per report, but the list is a trust
  // decision, and a long one is more likely a mistake than a plan.
  PARLAYD_ORACLE_ADDRESSES: Type.Optional(Type.String({ minLength: 1, maxLength: 64 * 43 })),
  PARLAYD_ORACLE_MAX_STALENESS_MS: Ms(60_000, 0),
  PARLAYD_RESOLUTION_GRACE_MS: Ms(86_400_000, 0),
  // The auth routes (/v1/auth/*) per IP (an IPv6 caller per /64), on top of the general limit: they need no
  // token, and each login costs a signature recovery and a durable write (used nonce, session, first-time
  // user). A person logs in a few times a day; 20/s with bursts of 40 leaves room for a NAT of many. 0 = off.
  PARLAYD_AUTH_RATE_LIMIT_PER_S: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 20 }),
  PARLAYD_AUTH_RATE_LIMIT_BURST: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 40 }),
  // The same per IPv4 /24 or IPv6 /48: the per-IP limit alone let one /24 log in 256 x 20/s. 0 = off.
  PARLAYD_AUTH_RATE_LIMIT_PER_NETWORK_PER_S: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 50 }),
  PARLAYD_AUTH_RATE_LIMIT_PER_NETWORK_BURST: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 100 }),
  // Login nonces spent (kept as used until they expire, auth/wallet-login.ts) per IP and per /24 or /48 at
  // once; past either a login is 429 with nothing spent. Without them one /24 filled the service-wide bound
  // of 100,000 used nonces in minutes and every login was 503. 128 logins per nonce lifetime (5 min) per IP,
  // 2,048 per network: 49 networks are needed to fill the bound.
  PARLAYD_LOGIN_NONCES_PER_IP: Type.Integer({ minimum: 1, maximum: 100_000, default: 128 }),
  PARLAYD_LOGIN_NONCES_PER_NETWORK: Type.Integer({ minimum: 1, maximum: 100_000, default: 2_048 }),
});
export type EnvValues = Static<typeof EnvSchema>;

/**
 * The parsed configuration: what toConfig makes of the schema's values, so a variable is declared once (in
 * EnvSchema) and named once more where it is turned into a field, never a third time in a hand-kept interface.
 */
export type Config = ReturnType<typeof toConfig>;

const SECRET_VARIABLES: ReadonlySet<string> = new Set(['PARLAYD_ADMIN_TOKEN']);

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses the environment; throws ConfigError naming the first bad variable. */
export function loadConfig(env: Readonly<Record<string, string | undefined>> = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const name of Object.keys(EnvSchema.properties)) {
    const text = env[name];
    if (text !== undefined && text !== '') raw[name] = text;
  }
  const values = convertFlatStrings(EnvSchema, Value.Default(EnvSchema, raw));
  const firstError = Value.Errors(EnvSchema, values).First();
  if (firstError !== undefined) {
    const name = firstError.path.replace(/^\//, '');
    // A secret's value is never echoed, even a wrong one: stderr often ends up in shipped logs.
    const shown = SECRET_VARIABLES.has(name) ? '(value hidden)' : JSON.stringify(env[name] ?? '');
    throw new ConfigError(`${name}=${shown} is invalid: ${firstError.message}`);
  }
  return toConfig(values as EnvValues);
}

function toConfig(v: EnvValues) {
  if (v.PARLAYD_WAGER_MIN_MICROS > v.PARLAYD_WAGER_MAX_MICROS) {
    throw new ConfigError('PARLAYD_WAGER_MIN_MICROS is above PARLAYD_WAGER_MAX_MICROS');
  }
  const jwtNames = [v.PARLAYD_JWKS_FILE, v.PARLAYD_JWT_ISSUER, v.PARLAYD_JWT_AUDIENCE];
  const jwtSetCount = jwtNames.filter((x) => x !== undefined).length;
  if (jwtSetCount !== 0 && jwtSetCount !== 3) {
    throw new ConfigError('PARLAYD_JWKS_FILE, PARLAYD_JWT_ISSUER and PARLAYD_JWT_AUDIENCE must be set together');
  }
  const adminToken = v.PARLAYD_ADMIN_TOKEN ?? randomBytes(32).toString('base64url');
  const oracleAddresses = parseOracleAddresses(v.PARLAYD_ORACLE_ADDRESSES);
  return {
    port: v.PARLAYD_PORT,
    host: v.PARLAYD_HOST,
    /** Port of the token-free /metrics listener; null for none. */
    metricsPort: v.PARLAYD_METRICS_PORT ?? null,
    dataDir: v.PARLAYD_DATA_DIR,
    lmdbMapSizeMb: v.PARLAYD_LMDB_MAP_SIZE_MB,
    adminToken,
    /** True when no PARLAYD_ADMIN_TOKEN was set and one was generated (main prints it once). */
    isAdminTokenGenerated: v.PARLAYD_ADMIN_TOKEN === undefined,
    shards: v.PARLAYD_SHARDS,
    engine: v.PARLAYD_ENGINE,
    verifyThreads: v.PARLAYD_VERIFY_THREADS,
    /** Null: one process. Else the cluster this process joins (docs/scaling.md). */
    cluster:
      v.PARLAYD_NATS_URL === undefined
        ? null
        : {
            natsServers: v.PARLAYD_NATS_URL.split(','),
            role: v.PARLAYD_ROLE,
            nodeId: v.PARLAYD_NODE_ID,
            /** Null: unset (a gateway takes the coordinator's; the coordinator is then one owner, '0-255'). */
            partitionMap: v.PARLAYD_PARTITION_MAP?.split(';') ?? null,
          },
    mmDomainTag: v.PARLAYD_MM_DOMAIN_TAG,
    mmAuthTimeoutMs: v.PARLAYD_MM_AUTH_TIMEOUT_MS,
    mmChallengeTtlMs: v.PARLAYD_MM_CHALLENGE_TTL_MS,
    mmHeartbeatMs: v.PARLAYD_MM_HEARTBEAT_MS,
    mmSessionTtlMs: v.PARLAYD_MM_SESSION_TTL_MS,
    mmMaxBufferedBytes: v.PARLAYD_MM_MAX_BUFFERED_BYTES,
    mmMaxPendingAuthPerIp: v.PARLAYD_MM_MAX_PENDING_AUTH_PER_IP,
    mmMaxPendingAuth: v.PARLAYD_MM_MAX_PENDING_AUTH,
    mmMaxPendingAuthPerNetwork: v.PARLAYD_MM_MAX_PENDING_AUTH_PER_NETWORK,
    mmPressureAuthTimeoutMs: v.PARLAYD_MM_PRESSURE_AUTH_TIMEOUT_MS,
    mmMaxSocketsPerMaker: v.PARLAYD_MM_MAX_SOCKETS_PER_MAKER,
    mmFramesPerS: v.PARLAYD_MM_FRAMES_PER_S,
    mmFrameBurst: v.PARLAYD_MM_FRAME_BURST,
    mmReplayMs: v.PARLAYD_MM_REPLAY_MS,
    mmReplayMaxMessages: v.PARLAYD_MM_REPLAY_MAX_MESSAGES,
    mmRefusalLogIntervalMs: v.PARLAYD_MM_REFUSAL_LOG_INTERVAL_MS,
    sessionTtlMs: v.PARLAYD_SESSION_TTL_MS,
    loginNonceTtlMs: v.PARLAYD_LOGIN_NONCE_TTL_MS,
    quoteWindowMs: v.PARLAYD_QUOTE_WINDOW_MS,
    lastLookMs: v.PARLAYD_LAST_LOOK_MS,
    maxFinalizingMs: v.PARLAYD_MAX_FINALIZING_MS,
    createCoalesceMs: v.PARLAYD_CREATE_COALESCE_MS,
    wagerMinMicros: v.PARLAYD_WAGER_MIN_MICROS,
    wagerMaxMicros: v.PARLAYD_WAGER_MAX_MICROS,
    jwt:
      jwtSetCount === 3
        ? {
            jwksFile: v.PARLAYD_JWKS_FILE!,
            issuer: v.PARLAYD_JWT_ISSUER!,
            audience: v.PARLAYD_JWT_AUDIENCE!,
            maxAgeMs: v.PARLAYD_JWT_MAX_AGE_MS,
          }
        : null,
    logLevel: v.PARLAYD_LOG_LEVEL,
    priceAssets: v.PARLAYD_PRICE_ASSETS.split(','),
    priceDurationsSecs: v.PARLAYD_PRICE_DURATIONS_SECS.split(',').map(Number),
    siwe: { domain: v.PARLAYD_SIWE_DOMAIN, uri: v.PARLAYD_SIWE_URI, chainId: v.PARLAYD_SIWE_CHAIN_ID },
    maxActiveRfqsPerShard: v.PARLAYD_MAX_ACTIVE_RFQS_PER_SHARD,
    maxWaiters: v.PARLAYD_MAX_WAITERS,
    maxInFlightCreates: v.PARLAYD_MAX_IN_FLIGHT_CREATES,
    maxEventLoopDelayMs: v.PARLAYD_MAX_EVENT_LOOP_DELAY_MS,
    unreadBodies: {
      maxBytesPerIp: v.PARLAYD_BODY_BYTES_IN_PROGRESS_PER_IP,
      maxBytesPerNetwork: v.PARLAYD_BODY_BYTES_IN_PROGRESS_PER_NETWORK,
      maxShedPerCaller: v.PARLAYD_MAX_UNREAD_CREATES_PER_CALLER,
      maxShedPerNetwork: v.PARLAYD_MAX_UNREAD_CREATES_PER_NETWORK,
      shedDeadlineMs: v.PARLAYD_CREATE_BODY_TIMEOUT_MS,
    },
    verifyMaxQueue: v.PARLAYD_VERIFY_MAX_QUEUE,
    rateLimit: { perSecond: v.PARLAYD_RATE_LIMIT_PER_S, burst: v.PARLAYD_RATE_LIMIT_BURST },
    /** Lowercase 0x addresses of the oracle signers; empty = only the admin's unsigned route. */
    oracleAddresses,
    oracleMaxStalenessMs: v.PARLAYD_ORACLE_MAX_STALENESS_MS,
    resolutionGraceMs: v.PARLAYD_RESOLUTION_GRACE_MS,
    authRateLimit: { perSecond: v.PARLAYD_AUTH_RATE_LIMIT_PER_S, burst: v.PARLAYD_AUTH_RATE_LIMIT_BURST },
    authNetworkRateLimit: { perSecond: v.PARLAYD_AUTH_RATE_LIMIT_PER_NETWORK_PER_S, burst: v.PARLAYD_AUTH_RATE_LIMIT_PER_NETWORK_BURST },
    loginNoncesPerIp: v.PARLAYD_LOGIN_NONCES_PER_IP,
    loginNoncesPerNetwork: v.PARLAYD_LOGIN_NONCES_PER_NETWORK,
  };
}

/** The oracle signers; a bad entry stops the start naming it (an address is public, so it may be shown). */
function parseOracleAddresses(text: string | undefined): string[] {
  if (text === undefined) return [];
  const entries = text.split(',').map((entry) => entry.trim());
  if (entries.length > 64) throw new ConfigError('PARLAYD_ORACLE_ADDRESSES lists more than 64 addresses');
  const addresses = entries.map((entry, i) => {
    const address = parseAddress(entry);
    if (address === null) {
      throw new ConfigError(
        `PARLAYD_ORACLE_ADDRESSES entry ${i + 1} ${JSON.stringify(entry)} is not an address (0x + 40 hex digits; mixed case must be its EIP-55 checksum)`,
      );
    }
    return address;
  });
  return [...new Set(addresses)];
}
