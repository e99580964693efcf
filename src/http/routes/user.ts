// Main thread. The authenticated user's own resources: balance (contract section 4), preferences (section 9).
import { defineRoute, json } from '../route.js';
import type { Services } from '../../services.js';
import { BalanceResponse } from '../../schemas/users.js';
import { Preferences, PreferencesPatch } from '../../schemas/preferences.js';
import { readBalance } from '../../ledger/ledger.js';

export function balanceBody(b: { availableMicros: bigint | string; reservedMicros: bigint | string; atRiskMicros: bigint | string }) {
  return {
    available_micros: b.availableMicros.toString(),
    reserved_micros: b.reservedMicros.toString(),
    at_risk_micros: b.atRiskMicros.toString(),
  };
}

export function userRoutes(s: Services) {
  return [
    defineRoute({
      method: 'GET', path: '/v1/user/balance', tag: 'user', auth: 'user',
      summary: 'Available, reserved and at-risk balance in micros (decimal strings)',
      responses: { 200: BalanceResponse },
      handler: ({ auth }) => json(200, balanceBody(readBalance(s.store, auth.userId))),
    }),
    defineRoute({
      method: 'GET', path: '/v1/user/preferences', tag: 'user', auth: 'user',
      summary: 'The user preferences',
      responses: { 200: Preferences },
      handler: ({ auth }) => json(200, s.preferences.get(auth.userId)),
    }),
    defineRoute({
      method: 'PATCH', path: '/v1/user/preferences', tag: 'user', auth: 'user',
      summary: 'Change any subset of the preferences; applies to RFQs created afterwards',
      body: PreferencesPatch, responses: { 200: Preferences },
      handler: async ({ auth, body }) => json(200, await s.preferences.update(auth.userId, body)),
    }),
  ];
}
