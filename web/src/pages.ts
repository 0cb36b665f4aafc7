import type { ComponentType } from 'preact';
import { ApiKeys } from './pages/api-keys.tsx';
import { Overview } from './pages/overview.tsx';
import { Secrets } from './pages/secrets.tsx';
import { Tasks } from './pages/tasks.tsx';
import { Workspace } from './pages/workspace.tsx';

/** What a page is given: the path segments after its own (`#/agents/ag_1/logs` → `['ag_1', 'logs']`). */
export interface PageProps {
  params: string[];
}

export interface Page {
  /** Its hash path, `/agents`; deeper paths (`/agents/…`) are the same page with params. */
  path: string;
  title: string;
  component: ComponentType<PageProps>;
}

/** The pages there are, in the navigation's order. */
export const PAGES: Page[] = [
  { path: '/overview', title: 'Overview', component: Overview },
  { path: '/tasks', title: 'Tasks', component: Tasks },
  { path: '/secrets', title: 'Secrets', component: Secrets },
  { path: '/workspace', title: 'Workspace', component: Workspace },
  { path: '/api-keys', title: 'API keys', component: ApiKeys },
];

/** The page a route names and the segments after its path, or undefined for no page. */
export function matchPage(route: string): { page: Page; params: string[] } | undefined {
  for (const page of PAGES) {
    if (route === page.path) return { page, params: [] };
    if (route.startsWith(`${page.path}/`)) {
      const params = route
        .slice(page.path.length + 1)
        .split('/')
        .filter((s) => s !== '')
        .map((s) => decodeURIComponent(s));
      return { page, params };
    }
  }
  return undefined;
}

/** A hash link to a page, its params encoded: `pageHref('/agents', id, 'logs')`. */
export function pageHref(path: string, ...params: string[]): string {
  return `#${[path, ...params.map((p) => encodeURIComponent(p))].join('/')}`;
}
