import type { LlmTool } from '../../ports/llm-gateway.ts';
import type { CallEvents, CallStep } from './call-context.ts';

/*
 * A streamed managed loop's `step` events (docs/calls.md, "Streamed calls"): each tool call, once
 * it ended, with its name, outcome and duration; a custom tool that calls one of the orchestrator's
 * dependencies is that sub-agent's call, named by the agent. No arguments and no results go out:
 * they may hold the run's secret values, which only the call's redacted logs show.
 */

/** `tools`, each reporting its calls to `events`; `agents` maps a tool to the agent it calls. */
export function reportingSteps(tools: LlmTool[], events: CallEvents, agents: Map<string, string>): LlmTool[] {
  return tools.map((tool) => ({
    ...tool,
    execute: async (args) => {
      const started = Date.now();
      const agent = agents.get(tool.name);
      const step = (outcome: CallStep['outcome']) =>
        events.step({
          kind: agent ? 'agent' : 'tool',
          name: agent ?? tool.name,
          outcome,
          duration_ms: Date.now() - started,
        });
      try {
        const result = await tool.execute(args);
        await step(agent && subCallError(result) ? 'error' : 'ok');
        return result;
      } catch (err) {
        await step('error');
        throw err;
      }
    },
  }));
}

/**
 * A sub-agent's failure, as its dependency tool returns it: its error envelope comes back to the
 * model as the tool's text, not as a throw (RunExtras.callDependency). Its code, or undefined when
 * the sub-call succeeded.
 */
export function subCallError(result: string): string | undefined {
  if (!result.startsWith('{"error":')) return undefined;
  try {
    const code = (JSON.parse(result) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : 'ERROR';
  } catch {
    return 'ERROR';
  }
}
