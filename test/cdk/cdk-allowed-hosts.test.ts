import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { ENV } from '../../functions/shared/env-names.ts';
import { addAgenthostStacks } from '../../lib/agenthost-app.ts';
import { foldedTemplate } from '../helpers/folded-template.ts';
import { templatesApp } from '../helpers/synthesized-stacks.ts';

/**
 * On AWS, POST /mcp answers under the API's own URL (PLATFORM_PUBLIC_URL, set on every function)
 * and the names `-c allowedHosts=…` adds, such as a custom domain in front of the API (docs/mcp.md).
 * Bundling is skipped: only the template matters here.
 */

const dirs: string[] = [];
const app = () => {
  const outdir = mkdtempSync(join(tmpdir(), 'agenthost-cdk-hosts-'));
  dirs.push(outdir);
  return templatesApp(outdir);
};
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('stateless stack: the MCP function’s allowed hosts', () => {
  test('gives the names to the mcp function alone, beside its public URL', () => {
    const { stateless } = addAgenthostStacks(app(), { allowedHosts: 'mcp.example.com,api.example.org' });
    const resources = foldedTemplate(stateless).toJSON().Resources as Record<
      string,
      { Properties: { Environment: { Variables: Record<string, unknown> } } }
    >;
    const variables = (module: 'mcp' | 'calls') =>
      resources[stateless.getLogicalId(stateless.functions[module].function.node.defaultChild as CfnFunction)]
        ?.Properties.Environment.Variables ?? {};
    assert.equal(variables('mcp')[ENV.allowedHosts], 'mcp.example.com,api.example.org');
    assert.ok(variables('mcp')[ENV.publicUrl], 'the API’s own URL too');
    assert.equal(variables('calls')[ENV.allowedHosts], undefined);
  });

  test('refuses a value that is not host names at synthesis, not at the first request', () => {
    for (const allowedHosts of ['https://mcp.example.com', 'mcp.example.com:443', 'a b']) {
      assert.throws(() => addAgenthostStacks(app(), { allowedHosts }), /allowedHosts must be/, allowedHosts);
    }
  });
});
