/** A workspace member's roles (spec "Workspaces"), apart from the schemas: the CLI names them without loading zod. */
export const ROLES = ['owner', 'member'] as const;
