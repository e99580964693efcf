// The fuzzer's loop against a running service on 127.0.0.1 (the caller starts and stops it): `count` HTTP
// requests built from the served route table (GET /v1/openapi.json) and mutated (gen.ts), then count/5
// random messages on an authenticated maker socket. Bounded in count and in time (maxMs); reproducible by
// seed. It collects every break of the contract it sees instead of stopping at the first, so one run
// reports them all.
import { randomUUID } from 'node:crypto';
import { ERROR_TABLE } from '../../src/lib/errors.js';
import { MAX_MAKER_FRAME_BYTES } from '../../src/contract/maker-protocol.js';
import { connectNewMaker, type MakerTarget } from '../../test/helpers/makers.js';
import { bodyBytes, fromSchema, int, mutate, nastyValue, pathParam, pick, prng, queryString, type Rng } from './gen.js';

export interface FuzzOptions {
  seed: number;
  count: number;
  /** A user's valid bearer: sent to GET routes only, so no request of the fuzzer moves money by design. */
  userToken: string;
  /** Stops early past this (a bound, not a target). */
  maxMs: number;
  /** Called after each request and maker message with how many of each were sent (the CLI's progress line). */
  onProgress?: (report: Readonly<FuzzReport>) => void;
}

export interface FuzzReport {
  requests: number;
  makerMessages: number;
  byStatus: Record<number, number>;
  failures: string[];
}

interface Operation {
  method: string;
  path: string;
  pathParams: string[];
  queryNames: string[];
  body: unknown;
}

type Schema = Record<string, unknown>;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'multipart/form-data; boundary=x',
  'application/JSON',
  '',
];

async function routeTable(baseUrl: string): Promise<{ operations: Operation[]; components: Record<string, Schema> }> {
  const document = (await (await fetch(`${baseUrl}/v1/openapi.json`)).json()) as Schema;
  const components = ((document['components'] as Schema | undefined)?.['schemas'] ?? {}) as Record<string, Schema>;
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document['paths'] as Record<string, Schema>)) {
    for (const method of METHODS) {
      const op = item[method] as Schema | undefined;
      if (op === undefined) continue;
      const parameters = (op['parameters'] ?? []) as Array<{ name: string; in: string }>;
      const content = ((op['requestBody'] as Schema | undefined)?.['content'] as Schema | undefined)?.['application/json'] as
        Schema | undefined;
      operations.push({
        method: method.toUpperCase(),
        path,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        queryNames: parameters.filter((p) => p.in === 'query').map((p) => p.name),
        body: content?.['schema'],
      });
    }
  }
  return { operations, components };
}

/** What every answer must satisfy (contract section 2); returns the break, or null. */
function checkAnswer(status: number, headers: Headers, text: string, method: string): string | null {
  if (status >= 500 && status !== 503) return `status ${status}: ${text.slice(0, 200)}`;
  if (status < 400 || method === 'HEAD') return null;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return `status ${status} without a JSON body: ${text.slice(0, 200)}`;
  }
  const code = body['code'];
  if (typeof code !== 'string' || !(code in ERROR_TABLE)) return `status ${status}: unknown code ${JSON.stringify(code)}`;
  if (ERROR_TABLE[code as keyof typeof ERROR_TABLE].status !== status) return `code ${code} with status ${status}`;
  if (typeof body['message'] !== 'string') return `code ${code} without a message`;
  const details = body['details'];
  if (details !== undefined && !Array.isArray(details)) return `code ${code}: details is not a list`;
  const extra = Object.keys(body).filter((k) => !['code', 'message', 'details'].includes(k));
  if (extra.length > 0) return `code ${code}: extra fields ${extra.join(',')}`;
  if ((status === 429 || status === 503) && headers.get('retry-after') === null) return `${code} without Retry-After`;
  return null;
}

function buildRequest(rng: Rng, op: Operation, components: Record<string, Schema>, userToken: string) {
  let path = op.path;
  for (const name of op.pathParams) path = path.replace(`{${name}}`, pathParam(rng));
  if (rng() < 0.05) path = path.replace(/\/[^/]*$/, `/${pathParam(rng)}/${pathParam(rng)}`);
  path += queryString(rng, op.queryNames);
  const method = rng() < 0.9 ? op.method : pick(rng, ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD']);
  const headers: Record<string, string> = {};
  const contentType = pick(rng, CONTENT_TYPES);
  if (contentType !== '') headers['content-type'] = contentType;
  // The only valid bearer goes to reads: nothing the fuzzer sends can move money, so balances must not change.
  const auth = int(rng, 4);
  if (auth === 1) headers['authorization'] = `Bearer ${String(nastyValue(rng)).replace(/[^\x21-\x7e]/g, '')}`;
  if (auth === 2) headers['authorization'] = pick(rng, ['Basic YTpi', 'Bearer', 'bearer  x', `Bearer ${'A'.repeat(9000)}`]);
  if (auth === 3 && method === 'GET') headers['authorization'] = `Bearer ${userToken}`;
  if (rng() < 0.1) headers['x-forwarded-for'] = String(nastyValue(rng)).replace(/[^\x21-\x7e]/g, '');
  const hasBody = method !== 'GET' && method !== 'HEAD' && rng() < 0.95;
  const start = op.body === undefined ? nastyValue(rng) : fromSchema(rng, op.body, components);
  const value = rng() < 0.15 ? start : mutate(rng, rng() < 0.5 ? start : mutate(rng, start));
  return { method, path, headers, body: hasBody ? bodyBytes(rng, value) : undefined };
}

async function fuzzHttp(baseUrl: string, rng: Rng, options: FuzzOptions, report: FuzzReport, deadlineMs: number): Promise<void> {
  const { operations, components } = await routeTable(baseUrl);
  for (let i = 0; i < options.count && Date.now() < deadlineMs; i++) {
    const request = buildRequest(rng, pick(rng, operations), components, options.userToken);
    let response: Response;
    try {
      response = await fetch(baseUrl + request.path, {
        method: request.method,
        headers: request.headers,
        ...(request.body === undefined ? {} : { body: request.body }),
        signal: AbortSignal.timeout(10_000),
      });
    } catch (err) {
      // fetch refuses some requests itself (a bad header value, a body on OPTIONS); those never left.
      if (err instanceof TypeError && !String(err.cause ?? '').includes('ECONN')) continue;
      report.failures.push(`#${i} ${request.method} ${request.path}: ${String(err)} ${String((err as Error).cause ?? '')}`);
      continue;
    }
    const text = await response.text();
    report.requests++;
    options.onProgress?.(report);
    report.byStatus[response.status] = (report.byStatus[response.status] ?? 0) + 1;
    const broken = checkAnswer(response.status, response.headers, text, request.method);
    if (broken !== null) report.failures.push(`#${i} ${request.method} ${request.path}: ${broken}`);
  }
}

const MAKER_SHAPES = (rng: Rng): unknown[] => [
  { type: 'quote', request_id: randomUUID(), quote_id: 'q' + int(rng, 100), odds: 1 + rng() * 3, max_wager_micros: String(int(rng, 1e7)) },
  { type: 'decline', request_id: randomUUID() },
  { type: 'quote_cancel', request_id: randomUUID(), quote_id: 'q1' },
  { type: 'last_look_response', request_id: randomUUID(), quote_id: 'q1', accept: true },
  { type: 'pong', ts: Date.now() },
  { type: 'auth_response', signature: '0x' },
];

/** Random messages on a logged-in maker socket; a closed socket is reopened, a bounded number of times. */
async function fuzzMaker(
  target: MakerTarget,
  rng: Rng,
  count: number,
  report: FuzzReport,
  deadlineMs: number,
  onProgress?: (report: Readonly<FuzzReport>) => void,
): Promise<void> {
  let maker = await connectNewMaker(target);
  let reopens = 0;
  /** The largest frame sent on this socket: the close of an oversized one may arrive after later sends. */
  let largestFrameBytes = 0;
  for (let i = 0; i < count && Date.now() < deadlineMs; i++) {
    if (maker.ws.readyState !== maker.ws.OPEN) {
      const closed = await maker.closed;
      // 1011 is an internal error: the server failed on what it read. 1006 (no close frame) is how uWS ends a
      // socket whose frame is over MAX_MAKER_FRAME_BYTES (contract/maker-protocol.ts), and only that may cause it.
      const isOversized = largestFrameBytes > MAX_MAKER_FRAME_BYTES;
      if (closed.code === 1011 || (closed.code === 1006 && !isOversized)) {
        report.failures.push(`#${i} maker socket closed ${closed.code} ${closed.reason} (largest frame ${largestFrameBytes} bytes)`);
      }
      largestFrameBytes = 0;
      if (++reopens > 100) break;
      maker = await connectNewMaker(target);
    }
    const shape = pick(rng, MAKER_SHAPES(rng));
    const value = rng() < 0.2 ? shape : mutate(rng, shape);
    const raw = rng() < 0.9 ? bodyBytes(rng, value) : Buffer.alloc(int(rng, 70_000), int(rng, 256));
    largestFrameBytes = Math.max(largestFrameBytes, typeof raw === 'string' ? Buffer.byteLength(raw) : raw.byteLength);
    maker.ws.send(raw);
    report.makerMessages++;
    onProgress?.(report);
    // Lets the server's answers and a close arrive before the next send.
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await maker.close();
}

export async function runFuzz(target: MakerTarget, options: FuzzOptions): Promise<FuzzReport> {
  const rng = prng(options.seed);
  const report: FuzzReport = { requests: 0, makerMessages: 0, byStatus: {}, failures: [] };
  const deadlineMs = Date.now() + options.maxMs;
  await fuzzHttp(target.baseUrl, rng, options, report, deadlineMs);
  await fuzzMaker(target, rng, Math.ceil(options.count / 5), report, deadlineMs, options.onProgress);
  return report;
}
