import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { routeList } from '../../functions/platform/routes.ts';

describe('docs/roles.md', () => {
  it('lists exactly the workspace-scoped routes of the route table, each with its role', async () => {
    const text = await readFile(new URL('../../docs/roles.md', import.meta.url), 'utf8');
    const documented = new Map(
      [...text.matchAll(/^\|\s*`(GET|POST|PUT|PATCH|DELETE) ([^`]+)`\s*\|\s*(owner|member)\s*\|$/gm)].map(
        (m) => [`${m[1]} ${m[2]}`, m[3]],
      ),
    );
    const actual = new Map(
      routeList.filter(([, r]) => r.workspaceRole).map(([, r]) => [`${r.method} ${r.path}`, r.workspaceRole]),
    );
    assert.deepEqual(Object.fromEntries(documented), Object.fromEntries(actual));
  });
});
