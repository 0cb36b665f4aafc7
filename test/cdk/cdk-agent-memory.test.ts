import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { addAgenthostStacks } from '../../lib/agenthost-app.ts';
import type { PlatformFunction } from '../../lib/constructs/platform-function.ts';
import { foldedTemplate } from '../helpers/folded-template.ts';
import { templatesApp } from '../helpers/synthesized-stacks.ts';

/**
 * The functions that run agents wait on a model or a sandbox for most of what they are billed, at
 * their configured memory. They get what their measured work needs: the calls function's peak
 * resident set is about half of 384 MB over every shape of the cost bench (npm run bench:aws-cost;
 * the figure: docs/performance.md, "AWS cost"), so 384 MB, not 1 GB (measured with Lambda's CPU
 * share of it: platform-function.ts); no function gets more than the others' 512 MB.
 */

const outdir = mkdtempSync(join(tmpdir(), 'agenthost-cdk-memory-'));
after(() => rmSync(outdir, { recursive: true, force: true }));

describe('stateless stack: the memory of the functions that wait on a model or a sandbox', () => {
  test('calls, mcp, schedule-runs and schedule-fire: 384 MB; no function above 512 MB', () => {
    const app = templatesApp(outdir);
    const { stateless } = addAgenthostStacks(app);
    const resources = foldedTemplate(stateless).toJSON().Resources as Record<
      string,
      { Type: string; Properties: { MemorySize?: number } }
    >;
    const memory = (fn: PlatformFunction) =>
      resources[stateless.getLogicalId(fn.function.node.defaultChild as CfnFunction)]?.Properties.MemorySize;
    for (const [name, fn] of [
      ['calls', stateless.functions.calls],
      ['mcp', stateless.functions.mcp],
      ['schedule-runs', stateless.functions['schedule-runs']],
      ['schedule-fire', stateless.schedules.fireFunction],
    ] as const) {
      assert.equal(memory(fn), 384, name);
    }
    const sizes = Object.entries(resources)
      // CDK's own deploy-time functions (the dashboard's upload) run once a deploy, not per request.
      .filter(([id, r]) => r.Type === 'AWS::Lambda::Function' && !id.startsWith('Custom'))
      .map(([id, r]) => [id, r.Properties.MemorySize ?? 128] as const);
    assert.deepEqual(
      sizes.filter(([, mb]) => mb > 512),
      [],
      'no function is given more than 512 MB',
    );
  });
});
