import assert from 'node:assert/strict';
import type { ApiResponse, RequestOptions } from './platform.ts';

type Request = <T = Record<string, unknown>>(
  method: string,
  path: string,
  options?: RequestOptions,
) => Promise<ApiResponse<T>>;

/**
 * Makes an account a member the only way there is: an owner invites it, and it accepts
 * (docs/roles.md). `invite` is the invite's body beside the account id (a role, say).
 */
export async function joinWorkspace(
  request: Request,
  workspaceId: string,
  ownerKey: string,
  invitee: { key: string; id: string },
  invite: { role?: 'owner' | 'member' } = {},
): Promise<void> {
  const invited = await request<{ id: string }>('POST', `/workspaces/${workspaceId}/invite`, {
    key: ownerKey,
    body: { account_id: invitee.id, ...invite },
  });
  assert.equal(invited.status, 201, invited.text);
  const accepted = await request('POST', `/invitations/${invited.body.id}/accept`, { key: invitee.key });
  assert.equal(accepted.status, 200, accepted.text);
}
