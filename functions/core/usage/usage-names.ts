/** How usage is grouped and filtered, apart from the schemas (usage-schemas.ts): the CLI names them without loading zod. */
export const GRANULARITIES = ['hour', 'day'] as const;

export const CALLER_GROUPS = [
  'agent',
  'version',
  'status',
  'provider',
  'model',
  'tenant',
  'endpoint',
] as const;

export const AUTHOR_GROUPS = [...CALLER_GROUPS, 'caller'] as const;

export const CALL_STATUSES = ['success', 'error', 'timeout'] as const;
