import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AiSdkGateway, type LlmProvidersConfig } from '../../functions/adapters/llm/ai-sdk-gateway.ts';
import type { LoopState } from '../../functions/core/calls/loop-state.ts';
import { recordedTools } from '../../functions/core/calls/recorded-tools.ts';
import type { WorkdirSnapshots } from '../../functions/core/calls/workdir-snapshots.ts';
import type { LlmTool, LlmToolLoopRequest } from '../../functions/ports/llm-gateway.ts';
import type { RunSteps } from '../../functions/ports/run-steps.ts';
import { type FakeLlmProviders, start } from '../helpers/fake-llm-providers.ts';

/**
 * A tool loop's steps (ports/run-steps.ts) through the AI SDK: each model request and each tool
 * call recorded, and a loop replayed from the record answered from it. The record is a Map here,
 * through JSON as the stores keep it; the stores' own recorder is tested across a restart
 * (test/platform/run-carried-on.test.ts).
 */

/** Steps over a Map, each outcome through JSON; `ran` names the steps that ran. */
function mapSteps(record: Map<string, string>, ran: string[]): RunSteps {
  return {
    async step<T>(name: string, fn: () => Promise<T>): Promise<T> {
      const kept = record.get(name);
      if (kept !== undefined) return JSON.parse(kept) as T;
      ran.push(name);
      const json = JSON.stringify(await fn());
      record.set(name, json);
      return JSON.parse(json) as T;
    },
  };
}

const freshState = (): LoopState =>
  ({ computeMs: 0, logs: [], omittedLogs: 0, submitted: undefined }) as Partial<LoopState> as LoopState;

describe('a tool loop recorded as steps, and replayed from them', () => {
  let fake: FakeLlmProviders;
  let gateway: AiSdkGateway;
  before(async () => {
    fake = await start();
    gateway = new AiSdkGateway({
      anthropic: { apiKey: 'sk-ant-test', baseUrl: fake.baseUrls.anthropic, defaultModel: undefined },
    } as LlmProvidersConfig);
  });
  after(() => fake.close());

  /** Two tools the model calls side by side, then submit; each call counted and logged. */
  const loop = (state: LoopState, steps: RunSteps, executed: string[], workdir?: WorkdirSnapshots) => {
    const tool = (name: string, ms: number): LlmTool => ({
      name,
      description: name,
      inputSchema: { type: 'object' },
      execute: async (args) => {
        executed.push(name);
        await new Promise((r) => setTimeout(r, ms));
        state.computeMs += ms;
        state.logs.push({ level: 'info', message: `${name} ran`, outline: name });
        if (name === 'submit_result') state.submitted = args as Record<string, unknown>;
        if (name === 'fails') throw new Error('the tool failed: no such thing');
        return `${name} at ${process.hrtime.bigint()}`;
      },
    });
    const request: LlmToolLoopRequest = {
      provider: 'anthropic',
      model: 'claude-test',
      prompt: 'Work.',
      tools: recordedTools([tool('slow', 40), tool('fails', 5), tool('submit_result', 1)], state, {
        steps,
        workdir,
      }),
      maxTurns: 5,
      submitTool: 'submit_result',
      signal: new AbortController().signal,
      steps,
    };
    return gateway.runToolLoop(request);
  };
  const script = () =>
    fake.enqueue(
      {
        toolCalls: [
          { name: 'slow', input: {} },
          { name: 'fails', input: {} },
        ],
      },
      { toolCalls: [{ name: 'submit_result', input: { answer: 42 } }] },
    );

  it('answers every finished model request and tool call from the record, the loop’s state too', async () => {
    const record = new Map<string, string>();
    const first = freshState();
    const executed: string[] = [];
    const ran: string[] = [];
    script();
    const before = fake.calls.length;
    const result = await loop(first, mapSteps(record, ran), executed);
    assert.equal(fake.calls.length - before, 2);
    assert.equal(result.stoppedBy, 'submit');
    assert.deepEqual(executed.sort(), ['fails', 'slow', 'submit_result']);
    assert.equal(ran.filter((n) => n.startsWith('model-')).length, 2);
    assert.equal(ran.filter((n) => n.startsWith('tool-')).length, 3);
    // What the model got back for turn 1's two calls, as the second request carried them.
    const toolResults = fake.calls.at(-1)?.toolResults ?? [];

    // Replayed whole: no request, no tool, the same result and state.
    const again = freshState();
    const executedAgain: string[] = [];
    const replay = await loop(again, mapSteps(record, []), executedAgain);
    assert.equal(fake.calls.length - before, 2, 'no model request sent');
    assert.deepEqual(executedAgain, [], 'no tool run');
    assert.deepEqual(replay, result);
    assert.deepEqual(again.submitted, { answer: 42 });
    assert.equal(again.computeMs, first.computeMs);
    assert.deepEqual(again.logs.map((l) => l.outline).sort(), first.logs.map((l) => l.outline).sort());

    // Cut after turn 1's tool calls: the replay sends only the second request, whose tool results
    // are the recorded ones (the slow tool's nanosecond clock, the failing one's error), and runs
    // only the submission.
    assert.equal(ran.at(-2), 'model-1');
    const unfinished = new Set(ran.slice(-2));
    const partial = new Map([...record].filter(([name]) => !unfinished.has(name)));
    fake.enqueue({ toolCalls: [{ name: 'submit_result', input: { answer: 42 } }] });
    const sent = fake.calls.length;
    const resumed = freshState();
    const executedResumed: string[] = [];
    const resumedResult = await loop(resumed, mapSteps(partial, []), executedResumed);
    assert.equal(resumedResult.stoppedBy, 'submit');
    assert.equal(fake.calls.length - sent, 1, 'only the unfinished request sent');
    assert.deepEqual(executedResumed, ['submit_result']);
    assert.deepEqual(fake.calls.at(-1)?.toolResults, toolResults);
    assert.deepEqual(resumed.submitted, { answer: 42 });
    assert.equal(resumed.logs.length, 3);
  });

  it('puts the working directory a replayed call left back before a call of the same turn runs again', async () => {
    // The first run: each call that may write leaves a snapshot numbered in the order taken.
    let taken = 0;
    const restored: string[] = [];
    const workdir: WorkdirSnapshots = {
      take: async () => `snapshot-${++taken}`,
      restore: async (snapshot) => void restored.push(snapshot),
    };
    const record = new Map<string, string>();
    const ran: string[] = [];
    script();
    await loop(freshState(), mapSteps(record, ran), [], workdir);
    // Cut while the slow call of turn 1 ran: the quick one (which failed, and still may have
    // written) finished and recorded its snapshot; the slow one and all after it did not.
    const [, slow, quick] = ran;
    assert.ok(slow && quick && slow !== quick);
    const cut = new Map([...record].filter(([name]) => name === 'model-0' || name === quick));
    const quickSnapshot = (JSON.parse(record.get(quick) ?? '{}') as { workdir?: string }).workdir;
    assert.ok(quickSnapshot);
    fake.enqueue({ toolCalls: [{ name: 'submit_result', input: { answer: 42 } }] });
    const executed: string[] = [];
    const seenByTheSlowCall: string[][] = [];
    const resumed = freshState();
    // The slow call runs again, and finds the quick call's files put back first.
    const tracking: WorkdirSnapshots = {
      take: workdir.take,
      restore: async (snapshot) => {
        restored.push(snapshot);
      },
    };
    const result = await loop(resumed, mapSteps(cut, []), executed, {
      ...tracking,
      take: async () => {
        seenByTheSlowCall.push([...restored]);
        return tracking.take();
      },
    });
    assert.equal(result.stoppedBy, 'submit');
    assert.deepEqual(executed.sort(), ['slow', 'submit_result']);
    assert.deepEqual(restored, [quickSnapshot], 'the quick call’s snapshot, put back once');
    assert.deepEqual(seenByTheSlowCall[0], [quickSnapshot]);
  });
});
