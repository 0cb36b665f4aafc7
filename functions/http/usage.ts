import {
  authorUsageBreakdown,
  authorUsageLogs,
  authorUsageSummary,
  authorUsageTimeseries,
  usageBreakdown,
  usageCompute,
  usageLogs,
  usageSummary,
  usageTenants,
  usageTimeseries,
} from '../core/usage/usage.ts';
import type { Operations } from '../edge/operations.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';
import { createModuleHandler } from './module-handler.ts';

export const operations: Operations<'usage'> = {
  usageSummary: ({ deps, auth, query }) => usageSummary(deps, auth, query),
  usageTimeseries: ({ deps, auth, query }) => usageTimeseries(deps, auth, query),
  usageBreakdown: ({ deps, auth, query }) => usageBreakdown(deps, auth, query),
  usageTenants: ({ deps, auth, query }) => usageTenants(deps, auth, query),
  usageLogs: ({ deps, auth, query }) => usageLogs(deps, auth, query),
  usageCompute: ({ deps, auth, query }) => usageCompute(deps, auth, query),
  authorUsageSummary: ({ deps, auth, query }) => authorUsageSummary(deps, auth, query),
  authorUsageTimeseries: ({ deps, auth, query }) => authorUsageTimeseries(deps, auth, query),
  authorUsageBreakdown: ({ deps, auth, query }) => authorUsageBreakdown(deps, auth, query),
  authorUsageLogs: ({ deps, auth, query }) => authorUsageLogs(deps, auth, query),
};

export const handler = createModuleHandler('usage', operations, lambdaDeps);
