import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RESERVED_SLUGS, slugSchema } from '../../functions/core/accounts/slug.ts';
import { MODULES, routeList } from '../../functions/platform/routes.ts';

describe('route table and org slugs', () => {
  it('reserves every first path segment the API uses, so no org can shadow a route', () => {
    for (const [, route] of routeList) {
      const first = route.path.split('/')[1] as string;
      if (first.startsWith('{')) continue; // the agent-call route itself: /{org}/…
      assert.ok(RESERVED_SLUGS.has(first), `"${first}" (from ${route.path}) is reserved`);
    }
  });

  it('has unique method + path pairs and only known modules', () => {
    const seen = new Set<string>();
    for (const [id, route] of routeList) {
      const key = `${route.method} ${route.path}`;
      assert.ok(!seen.has(key), `${key} is declared once (${id})`);
      seen.add(key);
      assert.ok((MODULES as readonly string[]).includes(route.module));
    }
  });

  it('accepts and refuses slugs by the documented rule', () => {
    for (const ok of ['acme', 'a1', 'my-org', 'x'.repeat(39), '0day'])
      assert.ok(slugSchema.safeParse(ok).success, ok);
    for (const bad of [
      'a',
      'x'.repeat(40),
      'Acme',
      'my_org',
      '-acme',
      'acme-',
      'my--org',
      'tasks',
      'api-keys',
      'ac me',
      'é',
    ]) {
      assert.ok(!slugSchema.safeParse(bad).success, bad);
    }
  });
});
