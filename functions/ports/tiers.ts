/**
 * The account tiers (spec "Tiers"), apart from the settings' schema (config.ts) so that a module
 * naming a tier, the CLI's included, does not load zod to do it.
 */
export const TIERS = ['free', 'pro', 'team', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];
