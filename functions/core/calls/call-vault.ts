import type { CoreDeps } from '../../ports/core-deps.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import type { AuthContext } from '../api-keys/api-keys.ts';
import { memberKeys } from '../workspaces/member-record.ts';

/**
 * Whose vault a call runs on: the agent's own workspace when the caller is a member of it (authors
 * and their teams), a schedule's own workspace for its runs, otherwise the caller's personal
 * workspace, so that a stranger calling a public tool supplies their own keys and never uses the
 * author's. That workspace is also whose the call's output is: the agent's owners read the whole of
 * its log lines only when it is theirs (call-log-lines.ts). Looked up once a call, so that the
 * secrets a run got and who reads its lines never disagree (a caller who joins the workspace while
 * the call runs does not make its lines the workspace's).
 */
export class CallVault {
  private lookup: Promise<string> | undefined;
  private resolved: string | undefined;
  private readonly auth: AuthContext;
  private readonly agent: AgentVersion;

  constructor(auth: AuthContext, agent: AgentVersion) {
    this.auth = auth;
    this.agent = agent;
  }

  /** The workspace whose vault supplies the call's declared secrets. */
  workspaceId(deps: CoreDeps): Promise<string> {
    this.lookup ??= this.find(deps).then((id) => {
      this.resolved = id;
      return id;
    });
    return this.lookup;
  }

  /** Whether the call runs on its agent's own workspace; false when that could not be told. */
  async isAgentWorkspace(deps: CoreDeps): Promise<boolean> {
    const id = this.resolved ?? (await this.workspaceId(deps).catch(() => undefined));
    return id === this.agent.workspace_id;
  }

  private async find(deps: CoreDeps): Promise<string> {
    if (this.auth.runWorkspaceId) return this.auth.runWorkspaceId;
    const member = await deps.store.get(memberKeys.member(this.agent.workspace_id, this.auth.accountId));
    return member ? this.agent.workspace_id : this.auth.personalWorkspaceId;
  }
}
