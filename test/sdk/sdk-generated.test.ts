import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { RESOURCES_FILE, renderResources } from '../../sdk/scripts/render-resources.ts';
import { GENERATED_FILE, renderTypes } from '../../sdk/scripts/render-types.ts';

describe('the SDK’s generated types', () => {
  it('match the OpenAPI document the platform serves, byte for byte', async () => {
    const committed = await readFile(join(import.meta.dirname, '..', '..', GENERATED_FILE), 'utf8');
    const fresh = await renderTypes();
    assert.ok(
      committed === fresh,
      `${GENERATED_FILE} is stale: the route table's OpenAPI document changed. Run \`npm run sdk:generate\` and commit the result.`,
    );
  });
});

describe('the SDK’s generated resource methods', () => {
  it('match the OpenAPI document the platform serves, byte for byte', async () => {
    const committed = await readFile(join(import.meta.dirname, '..', '..', RESOURCES_FILE), 'utf8');
    assert.ok(
      committed === renderResources(),
      `${RESOURCES_FILE} is stale: the route table's OpenAPI document changed. Run \`npm run sdk:generate\` and commit the result.`,
    );
  });
});
