import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { AgentHostClient } from './api-client.ts';

/** The signed-in session every page reads: the client (holding the key) and the chosen workspace. */
export interface Session {
  client: AgentHostClient;
  workspaceId: string;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in page');
  return session;
}
