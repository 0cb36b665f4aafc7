/**
 * Where the dashboard keeps the API key: sessionStorage, so it lasts for this tab's session and
 * goes when the tab closes. Never localStorage (it would outlive the session on a shared machine)
 * and never the URL (history, logs and Referer headers keep URLs).
 */
const KEY_ITEM = 'agenthost.apiKey';
/** The workspace last chosen in this tab; an id, not a secret, kept beside the key. */
const WORKSPACE_ITEM = 'agenthost.workspaceId';

export const sessionStore = {
  key: (): string | null => sessionStorage.getItem(KEY_ITEM),
  setKey: (key: string) => sessionStorage.setItem(KEY_ITEM, key),
  workspaceId: (): string | null => sessionStorage.getItem(WORKSPACE_ITEM),
  setWorkspaceId: (id: string) => sessionStorage.setItem(WORKSPACE_ITEM, id),
  clear: () => {
    sessionStorage.removeItem(KEY_ITEM);
    sessionStorage.removeItem(WORKSPACE_ITEM);
  },
};
