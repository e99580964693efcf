import { Type, type Static } from '@sinclair/typebox';
import { StrictObject } from './common.js';

export const QuoteTolerance = Type.Union([Type.Literal('strict'), Type.Literal('normal'), Type.Literal('lenient')]);
export type QuoteTolerance = Static<typeof QuoteTolerance>;

export const Preferences = StrictObject(
  {
    notifications_enabled: Type.Boolean(),
    quote_tolerance: QuoteTolerance,
    anonymous_mode_enabled: Type.Boolean(),
  },
  { $id: 'Preferences' },
);
export type Preferences = Static<typeof Preferences>;

/** PATCH body: any subset of the three fields (contract section 9); the empty one changes nothing and answers the whole object. */
export const PreferencesPatch = StrictObject({
  notifications_enabled: Type.Optional(Type.Boolean()),
  quote_tolerance: Type.Optional(QuoteTolerance),
  anonymous_mode_enabled: Type.Optional(Type.Boolean()),
});
export type PreferencesPatch = Static<typeof PreferencesPatch>;
