import * as z from 'zod';

/**
 * Words an org slug may not be: the first path segments of the API (an agent call is
 * /{org}/{agent}/{version}/{endpoint}, so an org named "tasks" would shadow /tasks/...), plus
 * names kept for future use. test/edge/routes.test.ts checks every route's first segment is here. The
 * web dashboard's folder of hashed files ("assets") is here too: in AWS the same CloudFront
 * distribution serves /assets/* from S3 and everything else from the API
 * (lib/constructs/dashboard-site.ts), so an org of that name would lose its calls there.
 */
export const RESERVED_SLUGS = new Set([
  'account',
  'accounts',
  'admin',
  'agents',
  'api',
  'api-keys',
  'assets',
  'author-usage',
  'billing',
  'checkout',
  'dashboard',
  'docs',
  'health',
  'internal',
  'invitations',
  'login',
  'logout',
  'mcp',
  'me',
  'openapi.json',
  'platform',
  'public',
  'runs',
  'schedules',
  'services',
  'settings',
  'signup',
  'static',
  'status',
  'system',
  'tasks',
  'usage',
  'v1',
  'webhooks',
  'workspaces',
  'www',
]);

export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,37}[a-z0-9])?$/;

export const slugSchema = z
  .string()
  .min(2, 'must be 2 to 39 characters')
  .max(39, 'must be 2 to 39 characters')
  .regex(
    SLUG_PATTERN,
    'must be lowercase letters, digits and hyphens, starting and ending with a letter or digit',
  )
  .refine((s) => !s.includes('--'), 'must not contain two hyphens in a row')
  .refine((s) => !RESERVED_SLUGS.has(s), 'is a reserved word');
