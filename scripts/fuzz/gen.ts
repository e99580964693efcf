// The fuzzer's generators: pure functions of one seeded PRNG, so a seed and a count reproduce a run request
// for request. Values come from the served OpenAPI schemas (a valid-looking start) and are then mutated
// (a field dropped, retyped, made huge, nested deep, the JSON broken), since the interesting failures sit
// just off the valid shapes.

/** mulberry32: small, fast, and the same sequence on every machine for a seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Rng = () => number;
export const int = (rng: Rng, maxExclusive: number): number => Math.floor(rng() * maxExclusive);
export const pick = <T>(rng: Rng, items: readonly T[]): T => items[int(rng, items.length)]!;

type Schema = Record<string, unknown>;

/** Strings that have broken parsers elsewhere: edges of numbers, encodings, paths and injection. */
const NASTY_STRINGS = [
  '',
  ' ',
  '0',
  '-1',
  '1e309',
  'NaN',
  '-0',
  '0x10',
  '9'.repeat(40),
  '１２３',
  '\u0000',
  '\uD800',
  '💥',
  '../../etc/passwd',
  '%00',
  '%',
  '%ZZ',
  "' OR 1=1 --",
  '<script>',
  '__proto__',
  'constructor',
  'null',
  'true',
  '0x' + 'f'.repeat(40),
  '0x' + '0'.repeat(130),
  'a'.repeat(5000),
  '{"a":1}',
  '\r\n\r\nX: y',
];
const NASTY_NUMBERS = [0, -1, 1, 2 ** 31, 2 ** 53 + 1, -(2 ** 63), 1e308, 0.5, -0.0001, 1e-9, 123456789012345678];

export function nastyValue(rng: Rng, depth = 0): unknown {
  switch (int(rng, depth > 3 ? 5 : 7)) {
    case 0:
      return pick(rng, NASTY_STRINGS);
    case 1:
      return pick(rng, NASTY_NUMBERS);
    case 2:
      return null;
    case 3:
      return rng() < 0.5;
    case 4:
      return int(rng, 1000).toString();
    case 5:
      return Array.from({ length: int(rng, 4) }, () => nastyValue(rng, depth + 1));
    default:
      return { [pick(rng, NASTY_STRINGS)]: nastyValue(rng, depth + 1), __proto__x: 1 };
  }
}

function resolve(schema: unknown, components: Record<string, Schema>): Schema {
  const s = (schema ?? {}) as Schema;
  const ref = s['$ref'];
  if (typeof ref === 'string') return components[ref.split('/').pop()!] ?? {};
  return s;
}

/** A value that follows `schema` where it is simple to: the valid-looking start of a mutation. */
export function fromSchema(rng: Rng, schema: unknown, components: Record<string, Schema>, depth = 0): unknown {
  const s = resolve(schema, components);
  if (depth > 6) return null;
  const variants = (s['anyOf'] ?? s['oneOf']) as unknown[] | undefined;
  if (Array.isArray(variants) && variants.length > 0) return fromSchema(rng, pick(rng, variants), components, depth + 1);
  if (Array.isArray(s['allOf'])) {
    return Object.assign({}, ...(s['allOf'] as unknown[]).map((part) => fromSchema(rng, part, components, depth + 1)));
  }
  if (s['const'] !== undefined) return s['const'];
  if (Array.isArray(s['enum'])) return pick(rng, s['enum'] as unknown[]);
  switch (s['type']) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const properties = (s['properties'] ?? {}) as Record<string, unknown>;
      for (const [name, sub] of Object.entries(properties)) if (rng() < 0.85) out[name] = fromSchema(rng, sub, components, depth + 1);
      return out;
    }
    case 'array': {
      const length = Math.min(int(rng, 4), typeof s['maxItems'] === 'number' ? s['maxItems'] : 4);
      return Array.from({ length }, () => fromSchema(rng, s['items'], components, depth + 1));
    }
    case 'integer':
      return int(rng, 10_000_000);
    case 'number':
      return rng() * 10;
    case 'boolean':
      return rng() < 0.5;
    case 'string':
      return typeof s['pattern'] === 'string' && s['pattern'].includes('0-9') ? String(int(rng, 1e9)) : 'x'.repeat(int(rng, 20));
    default:
      return nastyValue(rng, depth);
  }
}

/** One mutation of a JSON value; the body stays JSON. */
export function mutate(rng: Rng, value: unknown): unknown {
  if (value === null || typeof value !== 'object') return rng() < 0.5 ? nastyValue(rng) : value;
  if (Array.isArray(value)) {
    const copy = [...value];
    if (copy.length > 0 && rng() < 0.5) copy[int(rng, copy.length)] = mutate(rng, copy[int(rng, copy.length)]);
    else copy.push(nastyValue(rng));
    return rng() < 0.1 ? Array.from({ length: 2000 }, () => copy[0] ?? 1) : copy;
  }
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  const keys = Object.keys(copy);
  const key = keys.length > 0 ? pick(rng, keys) : 'extra';
  switch (int(rng, 4)) {
    case 0:
      delete copy[key];
      break;
    case 1:
      copy[key] = nastyValue(rng);
      break;
    case 2:
      copy[key] = mutate(rng, copy[key]);
      break;
    default:
      copy[pick(rng, NASTY_STRINGS)] = nastyValue(rng);
  }
  return copy;
}

/** Raw body bytes: mostly JSON (mutated), sometimes broken JSON, binary, or deeply nested. */
export function bodyBytes(rng: Rng, value: unknown): string | Uint8Array {
  const json = JSON.stringify(value) ?? 'null';
  switch (int(rng, 8)) {
    case 0:
      return json.slice(0, int(rng, json.length + 1));
    case 1:
      return Uint8Array.from({ length: int(rng, 256) }, () => int(rng, 256));
    case 2:
      return '['.repeat(2000 + int(rng, 5000));
    case 3:
      return json.replace(/"/, "'");
    default:
      return json;
  }
}

/** encodeURIComponent, which throws on a lone surrogate: that one is sent as its raw (invalid) UTF-8 bytes. */
function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
}

/** A path segment in place of a `{param}`: sometimes plausible, sometimes hostile. */
export function pathParam(rng: Rng): string {
  const plain = [String(int(rng, 100)), '0', '00000000-0000-0000-0000-000000000000', '0x' + '1'.repeat(40), 'r_' + int(rng, 1e6)];
  const value = rng() < 0.5 ? pick(rng, plain) : String(nastyValue(rng));
  return rng() < 0.8 ? encode(value) : value.replace(/[\s#?]/g, '');
}

export function queryString(rng: Rng, names: readonly string[]): string {
  const parts: string[] = [];
  for (let i = int(rng, 4); i > 0; i--) {
    const name = names.length > 0 && rng() < 0.8 ? pick(rng, names) : pick(rng, ['limit', 'cursor', 'wait_ms', 'x', '__proto__', '']);
    parts.push(`${encode(name)}=${rng() < 0.8 ? encode(String(nastyValue(rng))) : '%E0%A4%A'}`);
  }
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}
