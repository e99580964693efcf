// Main thread, at start. The OpenAPI 3.1 document, generated from the routes' own typebox schemas (the same
// objects that validate requests), so the document cannot drift from what the server enforces.
import type { TSchema } from '@sinclair/typebox';
import type { AnyRoute } from './route.js';
import { ERROR_TABLE } from '../lib/errors.js';
import { ErrorBody } from '../contract/common.js';

type Json = Record<string, unknown>;

export function buildOpenApi(routes: readonly AnyRoute[], version: string): Json {
  const components: Record<string, unknown> = {};
  const hoist = (schema: unknown): unknown => hoistIds(schema, components);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const operation: Json = { summary: route.summary, tags: [route.tag], operationId: `${route.method.toLowerCase()}${route.path}` };
    if (route.auth !== 'none') operation['security'] = route.auth === 'optional-user' ? [{}, { bearer: [] }] : [{ bearer: [] }];
    // Which token the route takes (none, user, optional-user, maker, admin): OpenAPI's security says only
    // "a bearer"; clients and the auth matrix test (test/http/auth-matrix.test.ts) read the kind here.
    operation['x-auth'] = route.auth;
    const parameters = [...toParameters(route.params, 'path', hoist), ...toParameters(route.query, 'query', hoist)];
    if (parameters.length > 0) operation['parameters'] = parameters;
    if (route.body !== undefined) {
      operation['requestBody'] = { required: true, content: { 'application/json': { schema: hoist(route.body) } } };
    }
    const responses: Json = {};
    for (const [status, schema] of Object.entries(route.responses)) {
      responses[status] = { description: 'success', content: { [route.produces ?? 'application/json']: { schema: hoist(schema) } } };
    }
    responses['default'] = {
      description: `error; code is one of ${Object.keys(ERROR_TABLE).join(', ')}`,
      content: { 'application/json': { schema: hoist(ErrorBody) } },
    };
    operation['responses'] = responses;
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'parlayd', version, description: 'RFQ and contest service. Money is integer micros; *_ms are Unix ms.' },
    paths,
    components: { schemas: components, securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
  };
}

function toParameters(schema: TSchema | undefined, where: 'path' | 'query', hoist: (s: unknown) => unknown): Json[] {
  if (schema === undefined) return [];
  const properties = (schema['properties'] ?? {}) as Record<string, TSchema>;
  const required = new Set((schema['required'] ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema: hoist(property),
  }));
}

/** Moves every sub-schema that has an $id into components and points at it, once per id. */
function hoistIds(schema: unknown, components: Record<string, unknown>): unknown {
  if (Array.isArray(schema)) return schema.map((s) => hoistIds(s, components));
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Json = {};
  for (const [key, value] of Object.entries(schema)) copy[key] = hoistIds(value, components);
  const id = copy['$id'];
  if (typeof id !== 'string') return copy;
  delete copy['$id'];
  components[id] ??= copy;
  return { $ref: `#/components/schemas/${id}` };
}
