/**
 * A managed loop's tool calls as spans (GenAI conventions: `execute_tool {name}`), and a tool that
 * calls one of the orchestrator's dependencies as the sub-agent's call (`invoke_agent {agent}`),
 * under which that agent's own call hangs (orchestration.ts passes the span on). The sandbox
 * commands a tool runs hang under its span too (sandbox-spans.ts). A tool whose command failed
 * ends in error with the command's exit status, as its `exec` span does. No arguments and no
 * results: they may hold the run's secret values.
 */
import type { LlmTool } from '../../ports/llm-gateway.ts';
import type { TraceSpan } from '../../ports/tracer.ts';
import { ToolFailure } from '../calls/loop-state.ts';
import { subCallError } from '../calls/loop-steps.ts';
import { type CallTrace, traced } from './call-trace.ts';

/** `tools`, each call of them a span of the current call; `agents` maps a tool to the agent it calls. */
export function tracedTools(
  trace: CallTrace | undefined,
  tools: LlmTool[],
  agents: Map<string, string>,
): LlmTool[] {
  if (!trace?.tracer.recording) return tools;
  return tools.map((tool) => {
    const agent = agents.get(tool.name);
    const name = agent ? `invoke_agent ${agent}` : `execute_tool ${tool.name}`;
    const attributes = agent
      ? { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': agent, 'gen_ai.tool.name': tool.name }
      : { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool.name };
    return {
      ...tool,
      execute: (args) =>
        traced(
          trace,
          name,
          { kind: agent ? 'client' : 'internal', attributes },
          (span) => failureNoted(span, () => tool.execute(args)),
          (result) => (agent ? subCallError(result) : undefined),
        ),
    };
  });
}

/** Runs the tool; a command's failure leaves its exit status on the span (traced() ends it in error). */
async function failureNoted(span: TraceSpan | undefined, run: () => Promise<string>): Promise<string> {
  try {
    return await run();
  } catch (err) {
    if (span && err instanceof ToolFailure) {
      span.set({
        'process.exit.code': err.exitCode ?? undefined,
        'process.exit.signal': err.signal ?? undefined,
      });
    }
    throw err;
  }
}
