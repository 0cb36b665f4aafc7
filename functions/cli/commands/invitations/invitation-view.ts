import type { Client } from '../../cli-context.ts';

export type Invitation = Awaited<ReturnType<Client['invitations']['list']>>['invitations'][number];

/** The columns of an invitation list, the invited account's and the owners' alike. */
export const invitationColumns = [
  { header: 'ID', value: (i: Invitation) => i.id },
  { header: 'WORKSPACE', value: (i: Invitation) => i.workspace.slug },
  { header: 'INVITED', value: (i: Invitation) => i.account_id ?? i.email },
  { header: 'ROLE', value: (i: Invitation) => i.role },
  { header: 'BY', value: (i: Invitation) => i.invited_by.org ?? i.invited_by.account_id },
  { header: 'EXPIRES', value: (i: Invitation) => i.expires_at },
];
