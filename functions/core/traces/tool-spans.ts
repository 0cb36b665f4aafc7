/**
 * A managed loop's tool calls as spans (GenAI conventions: `execute_tool {name}`), and a tool that
 * calls one of the orchestrator's dependencies as the sub-agent's call (`invoke_agent {agent}`),
 * under which that agent's own call hangs (orchestration.ts passes the span on). No arguments and
 * no results: they may hold the run's secret values.
 */
import type { LlmTool } from '../../ports/llm-gateway.ts';
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
          () => tool.execute(args),
          (result) => (agent ? subCallError(result) : undefined),
        ),
    };
  });
}
