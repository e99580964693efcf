// Main thread. The operator dashboard's page and its static files. They need no token: a browser
// navigating to /dashboard sends none, and they hold no figures. The page asks for the admin token, keeps it
// in the tab's sessionStorage and sends it as the first message of the live feed (dashboard/feed.ts), the
// only place the figures leave the service.
import { Type } from '@sinclair/typebox';
import { ApiError } from '../lib/errors.js';
import { StrictObject } from '../contract/common.js';
import { defineRoute, type Reply } from '../http/route.js';
import type { Asset, DashboardAssets } from './assets.js';

/**
 * Only this service's own files run on the page, so nothing else can read the token from sessionStorage; the
 * feed is a WebSocket to the same origin ('self' covers ws: in CSP 3). No framing: no clickjacking of the form.
 */
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  // The files change only with a new version of the service; revalidating costs one small request.
  'Cache-Control': 'no-cache',
};

const AssetParams = StrictObject({ asset: Type.String({ maxLength: 64, description: 'a file of the dashboard page, e.g. dashboard.js' }) });

function serve(asset: Asset): Reply {
  return { status: 200, body: asset.body, contentType: asset.contentType, headers: SECURITY_HEADERS };
}

export function dashboardRoutes(assets: DashboardAssets) {
  return [
    defineRoute({
      method: 'GET',
      path: '/dashboard',
      tag: 'ops',
      auth: 'none',
      summary: 'The operator dashboard page (asks for the admin token; the figures come over the live feed)',
      responses: { 200: Type.String() },
      produces: 'text/html',
      handler: () => serve(assets.page),
    }),
    defineRoute({
      method: 'GET',
      path: '/dashboard/{asset}',
      tag: 'ops',
      auth: 'none',
      params: AssetParams,
      summary: "A static file of the dashboard page (its script and style, uPlot's)",
      responses: { 200: Type.String() },
      produces: 'text/javascript',
      handler: ({ params }) => {
        const asset = assets.byName.get(params.asset);
        if (asset === undefined) throw new ApiError('NOT_FOUND');
        return serve(asset);
      },
    }),
  ];
}
