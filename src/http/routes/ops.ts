// Main thread. Operations routes (contract section 10) and the generated OpenAPI document.
import { Type } from '@sinclair/typebox';
import { defineRoute, json, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';
import { buildOpenApi } from '../openapi.js';

/** What these routes use of the services: no more (routes get narrow dependencies). */
type OpsRouteDeps = Pick<Services, 'metrics'>;

export function opsRoutes(s: OpsRouteDeps, allRoutes: () => readonly AnyRoute[], version: string) {
  let openApi: unknown = null; // built on first ask, once every route is registered
  return [
    defineRoute({
      method: 'GET',
      path: '/healthz',
      tag: 'ops',
      auth: 'none',
      summary: 'Liveness',
      responses: { 200: Type.Object({ status: Type.Literal('ok') }) },
      handler: () => json(200, { status: 'ok' }),
    }),
    defineRoute({
      // Behind the admin token: rendering every series costs the main thread in
      // proportion to the routes, statuses and error codes seen, and it tells a stranger the service's load.
      method: 'GET',
      path: '/metrics',
      tag: 'ops',
      auth: 'admin',
      summary: 'Prometheus metrics (admin bearer)',
      responses: { 200: Type.String() },
      produces: 'text/plain; version=0.0.4',
      handler: async () => ({ status: 200, body: await s.metrics.registry.metrics(), contentType: s.metrics.registry.contentType }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/openapi.json',
      tag: 'ops',
      auth: 'none',
      summary: 'This document',
      responses: { 200: Type.Object({}, { additionalProperties: true }) },
      handler: () => json(200, (openApi ??= buildOpenApi(allRoutes(), version))),
    }),
  ];
}
