import type { ComponentType } from 'preact';
import type { PageProps } from './page-links.ts';
import { Agents } from './pages/agents.tsx';
import { ApiKeys } from './pages/api-keys.tsx';
import { Billing } from './pages/billing.tsx';
import { Directory } from './pages/directory.tsx';
import { Overview } from './pages/overview.tsx';
import { Runs } from './pages/runs.tsx';
import { Schedules } from './pages/schedules.tsx';
import { Secrets } from './pages/secrets.tsx';
import { Services } from './pages/services.tsx';
import { Tasks } from './pages/tasks.tsx';
import { Usage } from './pages/usage.tsx';
import { Workspace } from './pages/workspace.tsx';

export interface Page {
  /** Its hash path, `/agents`; deeper paths (`/agents/…`) are the same page with params. */
  path: string;
  title: string;
  component: ComponentType<PageProps>;
}

/** The pages there are, in the navigation's order. */
export const PAGES: Page[] = [
  { path: '/overview', title: 'Overview', component: Overview },
  { path: '/agents', title: 'Agents', component: Agents },
  { path: '/directory', title: 'Directory', component: Directory },
  { path: '/schedules', title: 'Schedules', component: Schedules },
  { path: '/services', title: 'Services', component: Services },
  { path: '/runs', title: 'Runs', component: Runs },
  { path: '/tasks', title: 'Tasks', component: Tasks },
  { path: '/usage', title: 'Usage', component: Usage },
  { path: '/billing', title: 'Billing', component: Billing },
  { path: '/secrets', title: 'Secrets', component: Secrets },
  { path: '/api-keys', title: 'API keys', component: ApiKeys },
  { path: '/workspace', title: 'Workspace', component: Workspace },
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
