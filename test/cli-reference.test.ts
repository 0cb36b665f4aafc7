import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { cliReference } from '../functions/cli/cli-reference.ts';

describe('docs/cli.md', () => {
  it('is the CLI’s own help, as `npm run cli:docs` writes it (regenerate after changing a command)', async () => {
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    const committed = await readFile(new URL('../docs/cli.md', import.meta.url), 'utf8');
    assert.equal(committed, cliReference(pkg.version), 'docs/cli.md is stale: run npm run cli:docs');
  });
});
