/*
 * What a page is given and how to link to one, apart from the page table (pages.ts), which imports
 * every page: a page that links to another imports this, not the table, so no page imports itself
 * back through it.
 */

/** What a page is given: the path segments after its own (`#/agents/ag_1/logs` → `['ag_1', 'logs']`). */
export interface PageProps {
  params: string[];
}

/** A hash link to a page, its params encoded: `pageHref('/agents', id, 'logs')`. */
export function pageHref(path: string, ...params: string[]): string {
  return `#${[path, ...params.map((p) => encodeURIComponent(p))].join('/')}`;
}

/** A call's trace page (pages/call-trace.tsx): under the agent whose call it is, as the API has it. */
export function callTraceHref(agentId: string, requestId: string): string {
  return pageHref('/agents', agentId, 'calls', requestId, 'trace');
}
