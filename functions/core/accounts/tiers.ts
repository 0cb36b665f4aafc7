import type { Tier } from '../../ports/config.ts';

export interface TierLimits {
  /** Agent calls per UTC day (spec "Limits"). */
  dailyCalls: number;
  concurrentRequests: number;
  sandboxDailyCalls: number;
  sandboxMaxTimeoutSeconds: number;
  scheduling: boolean;
  services: number;
  instancesPerService: number;
}

/**
 * Free and Pro are the spec's numbers. The spec gives Team only service limits and Enterprise
 * "custom"; the other Team and Enterprise values are our defaults (docs/decisions.md).
 */
export const TIER_LIMITS: Record<Tier, TierLimits> = {
  free: {
    dailyCalls: 1_000,
    concurrentRequests: 10,
    sandboxDailyCalls: 50,
    sandboxMaxTimeoutSeconds: 30,
    scheduling: false,
    services: 0,
    instancesPerService: 0,
  },
  pro: {
    dailyCalls: 10_000,
    concurrentRequests: 50,
    sandboxDailyCalls: 500,
    sandboxMaxTimeoutSeconds: 300,
    scheduling: true,
    services: 5,
    instancesPerService: 3,
  },
  team: {
    dailyCalls: 50_000,
    concurrentRequests: 100,
    sandboxDailyCalls: 2_500,
    sandboxMaxTimeoutSeconds: 300,
    scheduling: true,
    services: 20,
    instancesPerService: 10,
  },
  enterprise: {
    dailyCalls: 250_000,
    concurrentRequests: 500,
    sandboxDailyCalls: 10_000,
    sandboxMaxTimeoutSeconds: 300,
    scheduling: true,
    services: 100,
    instancesPerService: 20,
  },
};
