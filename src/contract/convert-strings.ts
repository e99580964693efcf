// Pure; runs wherever text must become typed values before validation: query strings and path parameters
// (http/validate.ts) and PARLAYD_* variables (config.ts). All three are flat maps of strings.
//
// Why not typebox's Value.Convert: it parses leniently (parseInt), so "1.5" and "1e3" become the integer 1,
// "true" becomes 1 and "0x10" becomes 16; a query `at_ms=1e12` would then silently ask about 1 ms after the
// epoch, and PARLAYD_PORT=1.5 would listen on port 1. Here a string is converted only when it is exactly the
// text of a value of the wanted type; anything else stays a string and fails validation with a clear error.
import type { TSchema } from '@sinclair/typebox';

const INTEGER_RE = /^-?[0-9]{1,20}$/;
const NUMBER_RE = /^-?[0-9]{1,20}(?:\.[0-9]{1,20})?$/;

/** A copy of the flat record `value` with each string converted to the type its property schema wants. */
export function convertFlatStrings(schema: TSchema, value: unknown): unknown {
  return flatStringConverter(schema)(value);
}

/**
 * The converter of one schema, with each property's JSON types worked out once: validators run it on every
 * request (query and path parameters), where re-reading the schema per request showed in the GET profile.
 * A schema whose properties all accept strings converts nothing, so its converter returns the value as is.
 */
export function flatStringConverter(schema: TSchema): (value: unknown) => unknown {
  const kindsByName = new Map<string, Set<string>>();
  for (const [name, property] of Object.entries((schema['properties'] ?? {}) as Record<string, TSchema>)) {
    const kinds = new Set<string>();
    collectKinds(property, kinds);
    kindsByName.set(name, kinds);
  }
  if ([...kindsByName.values()].every((kinds) => kinds.has('string'))) return (value) => value;
  return (value) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const name in out) {
      const kinds = kindsByName.get(name);
      const text = out[name];
      if (kinds !== undefined && typeof text === 'string') out[name] = convertText(kinds, text);
    }
    return out;
  };
}

function convertText(kinds: ReadonlySet<string>, text: string): unknown {
  if (kinds.has('string')) return text; // the text itself is acceptable: never reinterpret it
  if ((kinds.has('integer') || kinds.has('number')) && INTEGER_RE.test(text)) return Number(text);
  if (kinds.has('number') && NUMBER_RE.test(text)) return Number(text);
  if (kinds.has('boolean') && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

/** The JSON types a schema admits: its `type`, the type of its `const`, and those of its union members. */
function collectKinds(schema: TSchema, kinds: Set<string>): void {
  const type: unknown = schema['type'];
  if (typeof type === 'string') kinds.add(type);
  if (Array.isArray(type)) for (const t of type) if (typeof t === 'string') kinds.add(t);
  if ('const' in schema) kinds.add(Number.isInteger(schema['const']) ? 'integer' : typeof schema['const']);
  for (const member of (schema['anyOf'] ?? schema['oneOf'] ?? []) as TSchema[]) collectKinds(member, kinds);
}
