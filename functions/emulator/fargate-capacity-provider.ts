import type { CapacityProviderName } from './ecs-task-ledger.ts';
import { AwsWireError } from './emulator-http.ts';

/**
 * The capacity provider of a RunTask's tasks or a service's (CreateService takes the same two
 * fields): FARGATE for `launchType: FARGATE` (or neither given:
 * the emulated clusters are Fargate's, as the sandbox's is), else its capacityProviderStrategy's.
 * Of a strategy the emulator takes, for every task of the call, the provider with a `base` if one
 * has, else the one with the greatest weight: ECS spreads a call's tasks by base and weight, which
 * for the one task a call starts here comes to the same.
 */
export function capacityProvider(body: Record<string, unknown>): CapacityProviderName {
  const strategy = body.capacityProviderStrategy as
    | { capacityProvider?: string; base?: number; weight?: number }[]
    | undefined;
  if (strategy !== undefined && body.launchType !== undefined) {
    throw new AwsWireError(
      'InvalidParameterException',
      400,
      'Specifying both a launch type and capacity provider strategy is not supported. Remove one and try again.',
    );
  }
  if (strategy === undefined || strategy.length === 0) {
    if (body.launchType === undefined || body.launchType === 'FARGATE') return 'FARGATE';
    throw new AwsWireError(
      'InvalidParameterException',
      400,
      `The emulated ECS runs Fargate tasks only, not launch type ${String(body.launchType)}.`,
    );
  }
  for (const s of strategy) {
    if (s.capacityProvider !== 'FARGATE' && s.capacityProvider !== 'FARGATE_SPOT') {
      throw new AwsWireError(
        'InvalidParameterException',
        400,
        `The specified capacity provider ${String(s.capacityProvider)} is not in the cluster's capacity providers (the emulated clusters have FARGATE and FARGATE_SPOT).`,
      );
    }
  }
  const chosen =
    strategy.find((s) => (s.base ?? 0) > 0) ??
    strategy.reduce((best, s) => ((s.weight ?? 0) > (best.weight ?? 0) ? s : best));
  return chosen.capacityProvider as CapacityProviderName;
}
