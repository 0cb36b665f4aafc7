import type { CoreDeps } from '../../ports/core-deps.ts';
import type { LlmToolLoopResult } from '../../ports/llm-gateway.ts';
import type { SandboxSession } from '../../ports/sandbox.ts';
import { PlatformError } from '../../shared/errors.ts';
import type { AgentVersion } from '../agents/agent-record.ts';
import type { Warning } from '../agents/manifest.ts';
import { DEFAULT_MAX_TURNS, MAX_TURNS_LIMIT } from '../agents/manifest-limits.ts';
import { modelCallRecorder } from '../traces/model-spans.ts';
import { tracedTools } from '../traces/tool-spans.ts';
import type { CallContext, EngineRun } from './call-context.ts';
import { chooseModel, chooseProvider, renderTemplate, skillTexts, tokenUsage } from './direct-llm.ts';
import { builtInTools, SUBMIT_TOOL } from './loop-built-in-tools.ts';
import { customTool, matchingDependency } from './loop-custom-tools.ts';
import { loopFailure, loopResult, type ManagedLoopResult } from './loop-result.ts';
import type { LoopState } from './loop-state.ts';
import { reportingSteps } from './loop-steps.ts';
import { recordedTools, type ToolRecording } from './recorded-tools.ts';
import { redactedEvents } from './redacted-events.ts';
import { openRunSession, type PlacedFile } from './sandbox-run.ts';
import { workdirSnapshots } from './workdir-snapshots.ts';

/**
 * The tools the model is offered: the built-in ones (no bash in strict mode) and the manifest's,
 * each traced, reported on a streamed call (`events`), which names the sub-agent a dependency's
 * tool calls, and recorded as the run's steps (`steps`).
 */
function offeredTools(
  call: CallContext,
  state: LoopState,
  recording: ToolRecording | undefined,
  options: {
    strict: boolean;
    outputSchema: Record<string, unknown> | undefined;
    events: Parameters<typeof reportingSteps>[1] | undefined;
  },
) {
  const m = call.agent.manifest;
  const tools = [
    ...builtInTools(state, options.outputSchema).filter((t) => !(options.strict && t.name === 'bash')),
    ...m.custom_tools.map((t) => customTool(state, t)),
  ];
  const agents = new Map<string, string>();
  for (const t of m.custom_tools) {
    const dependency = state.callDependency && matchingDependency(t.command, state.dependencies);
    if (dependency) agents.set(t.name, dependency.id);
  }
  const traced = tracedTools(
    call.trace,
    options.events ? reportingSteps(tools, options.events, agents) : tools,
    agents,
  );
  // Recorded outermost: a replayed call is neither run, traced nor reported again.
  return recordedTools(traced, state, recording);
}

/**
 * The managed_loop engine: an LLM tool-use loop (LlmGateway.runToolLoop) whose tools run in one
 * sandbox session for the whole call: the agent's bundle unpacked, the call's files under input/,
 * the declared secrets only with loop.secrets_in_sandbox, no network. Built-in tools bash,
 * read_file, write_file, list_files and submit_result, plus the manifest's custom_tools (arguments
 * validated against input_schema, then shell-quoted into the command's placeholders). Strict
 * orchestration mode drops bash.
 *
 * Outcomes: the arguments of submit_result are `data` (checked against output_schema: a mismatch is
 * 502 LLM_ERROR, retryable, as in direct_llm, since the model produced it); all loop.max_turns turns
 * used without a submission is 422 UNPROCESSABLE; the model ending without a tool call and without
 * submitting is 502 LLM_ERROR; the run's time limit (the call's deadline, capped by the tier's
 * sandbox limit like the code runtime) is 504 TIMEOUT. Errors carry computeMs and logs.
 */
export async function runManagedLoop(
  deps: CoreDeps,
  call: CallContext,
  run: EngineRun,
): Promise<ManagedLoopResult> {
  const { agent } = call;
  const m = agent.manifest;
  const runToolLoop = deps.llm.runToolLoop?.bind(deps.llm);
  if (!runToolLoop) {
    throw new PlatformError('INTERNAL_ERROR', 'This platform’s LLM gateway cannot run tool-use loops');
  }
  const provider = chooseProvider(deps, agent, run.options.provider);
  const model = chooseModel(deps, agent, provider, run.options.model);
  const maxTurns = Math.min(Math.max(1, m.loop?.max_turns ?? DEFAULT_MAX_TURNS), MAX_TURNS_LIMIT);
  // The caller steers the model, and the model every command in the sandbox: the declared secrets
  // are checked (400 MISSING_SECRETS) and redacted, but go in only when the manifest says so.
  const { session, platformSession, secrets, runDeadline, commandLimitMs, placed } = await openRunSession(
    deps,
    call,
    run,
    { inject: m.loop?.secrets_in_sandbox === true, commands: true },
  );
  // What a streamed call sends is redacted as its result is (loopResult).
  const streamed = run.events && redactedEvents(run.events, secrets);
  const deadlineSignal = AbortSignal.timeout(Math.max(0, runDeadline.remainingMs()));
  const runSignal = AbortSignal.any([run.signal, deadlineSignal]);
  const state: LoopState = {
    session,
    secrets,
    runDeadline,
    commandLimitMs,
    signal: runSignal,
    computeMs: 0,
    logs: [],
    omittedLogs: 0,
    submitted: undefined,
    dependencies: m.manifest?.dependencies ?? [],
    callDependency: run.extras?.callDependency,
  };
  try {
    // Rendered inside the try: a missing template variable (400) still closes the session.
    const prompt = loopPrompt(agent, run, placed);
    // Strict mode: the agent's own (with dependencies), or forced by a strict parent.
    const strict =
      run.extras?.strict === true ||
      ((m.manifest?.dependencies.length ?? 0) > 0 && m.manifest?.orchestration_mode === 'strict');
    // In strict mode an orchestrator must call at least one dependency before it submits.
    state.requireSubCall =
      strict && (m.manifest?.dependencies.length ?? 0) > 0 ? run.extras?.subCalls : undefined;
    const outputSchema = m.output_schema as Record<string, unknown> | undefined;
    const recording = toolRecording(deps, run, platformSession);
    const offered = offeredTools(call, state, recording, { strict, outputSchema, events: streamed?.events });
    const skillWarnings: Warning[] = [];
    const skills = await skillTexts(deps, agent, run.options, skillWarnings);
    const system = [
      systemText(agent, session.workDir, maxTurns, placed.length > 0, outputSchema, strict),
      ...skills,
    ].join('\n\n');
    let loop: LlmToolLoopResult;
    try {
      loop = await runToolLoop({
        provider,
        model,
        system,
        prompt,
        tools: offered,
        maxTurns,
        submitTool: SUBMIT_TOOL,
        signal: runSignal,
        onModelCall: modelCallRecorder(call.trace, provider, model),
        steps: run.steps,
      });
    } catch (err) {
      throw loopFailure(state, err, { callSignal: run.signal, tier: call.auth.tier });
    }
    // Counted now: a call that ends before its result still records what the loop used.
    run.tokens?.finished(provider, model, tokenUsage(loop.usage));
    // The model's last words, for a streamed call (its result is the submitted object).
    if (streamed) {
      if (loop.text) await streamed.events.delta(loop.text);
      await streamed.end();
    }
    return await loopResult(state, loop, {
      provider,
      model,
      maxTurns,
      outputSchema,
      warnings: skillWarnings,
    });
  } finally {
    await session.close();
  }
}

/** A run's tool calls recorded as its steps, with its working directory (none for a plain call). */
function toolRecording(
  deps: CoreDeps,
  run: EngineRun,
  platformSession: SandboxSession,
): ToolRecording | undefined {
  return run.steps && { steps: run.steps, workdir: workdirSnapshots(platformSession, deps.logger) };
}

/** The prompt: the template filled with the input (and, for file calls, the files and metadata), or the input as JSON. */
function loopPrompt(agent: AgentVersion, run: EngineRun, placed: PlacedFile[]): string {
  const variables =
    run.files.length > 0
      ? {
          ...run.input,
          files: placed.map((p) => ({
            path: p.path,
            original_name: p.file.original_name,
            content_type: p.file.content_type,
            size_bytes: p.file.size_bytes,
          })),
          ...(run.metadata ? { metadata: run.metadata } : {}),
        }
      : run.input;
  return agent.manifest.prompt_template
    ? renderTemplate(agent.manifest.prompt_template, variables)
    : JSON.stringify(variables);
}

function systemText(
  agent: AgentVersion,
  workDir: string,
  maxTurns: number,
  hasFiles: boolean,
  outputSchema: Record<string, unknown> | undefined,
  strict: boolean,
): string {
  const lines = [
    agent.manifest.description,
    '',
    `You work in a sandboxed Linux working directory (${workDir}) that holds the agent's files${hasFiles ? ' and, under input/, the files the caller sent' : ''}. There is no network. Use the tools to do the task${strict ? '' : '; bash runs shell commands'}. Tool paths are relative to the working directory.`,
    `When you are done, call ${SUBMIT_TOOL} once with the final result as its arguments (a JSON object): only that is returned to the caller. You have at most ${maxTurns} turns.`,
  ];
  if (outputSchema) {
    lines.push(`The result must match this JSON Schema: ${JSON.stringify(outputSchema)}`);
  }
  return lines.join('\n');
}
