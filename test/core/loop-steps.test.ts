import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallStep } from '../../functions/core/calls/call-context.ts';
import { reportingSteps } from '../../functions/core/calls/loop-steps.ts';
import type { LlmTool } from '../../functions/ports/llm-gateway.ts';

/** A streamed managed loop's steps (functions/core/calls/loop-steps.ts). */

const tool = (name: string, execute: LlmTool['execute']): LlmTool => ({
  name,
  description: name,
  inputSchema: { type: 'object' },
  execute,
});

describe('the steps of a streamed managed loop', () => {
  it('reports each tool call once it ended: a tool’s throw and a sub-agent’s error envelope as errors, nothing of their arguments or results', async () => {
    const steps: CallStep[] = [];
    const tools = reportingSteps(
      [
        tool('bash', async () => 'secret output'),
        tool('broken', async () => {
          throw new Error('no such file');
        }),
        tool('ask_weather', async () => '{"error":{"code":"TIMEOUT","message":"late"}}'),
        tool('ask_maps', async () => '{"data":{"ok":true},"warnings":[]}'),
      ],
      {
        delta: async () => undefined,
        step: async (s) => {
          steps.push(s);
        },
      },
      new Map([
        ['ask_weather', 'acme/weather'],
        ['ask_maps', 'acme/maps'],
      ]),
    );
    for (const t of tools) await t.execute({ token: 'sk-secret' }).catch(() => undefined);
    assert.deepEqual(
      steps.map(({ kind, name, outcome }) => ({ kind, name, outcome })),
      [
        { kind: 'tool', name: 'bash', outcome: 'ok' },
        { kind: 'tool', name: 'broken', outcome: 'error' },
        { kind: 'agent', name: 'acme/weather', outcome: 'error' },
        { kind: 'agent', name: 'acme/maps', outcome: 'ok' },
      ],
    );
    assert.ok(!JSON.stringify(steps).includes('secret'), 'no argument or result in a step');
  });
});
