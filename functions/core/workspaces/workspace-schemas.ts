import * as z from 'zod';
import { slugSchema } from '../accounts/slug.ts';
import { ROLES } from './roles.ts';

export { ROLES } from './roles.ts';

export const workspaceCreateBody = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(100),
  slug: slugSchema.optional().describe('Globally unique; derived from the name when omitted'),
});

export const workspaceSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  slug: z.string(),
  role: z.enum(ROLES).describe('The caller’s role in the workspace'),
  personal: z.boolean(),
  created_at: z.string(),
});

export const workspaceListSchema = z.object({ workspaces: z.array(workspaceSchema) });

export const memberSchema = z.object({
  account_id: z.uuid(),
  org: z.string().nullable(),
  email: z.string().nullable(),
  role: z.enum(ROLES),
  joined_at: z.string(),
});

export const memberListSchema = z.object({ members: z.array(memberSchema) });

export const workspaceParams = z.strictObject({ workspace_id: z.string().min(1).max(100) });
export const memberParams = z.strictObject({
  workspace_id: z.string().min(1).max(100),
  account_id: z.string().min(1).max(100),
});

export type Workspace = z.infer<typeof workspaceSchema>;
export type Member = z.infer<typeof memberSchema>;
