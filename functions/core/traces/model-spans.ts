/**
 * Model request spans (OpenTelemetry's GenAI conventions: `chat {model}`, gen_ai.* attributes): the
 * provider, the model, the tokens in and out, the finish reasons, the answer's id and model (exported
 * only) and, for a streamed answer, the time to its first token. No prompt and no answer text: they may hold the caller's data and secrets.
 */
import type { LlmModelCall, LlmRequest, LlmResponseFacts, LlmResult } from '../../ports/llm-gateway.ts';
import type { TraceSpan } from '../../ports/tracer.ts';
import { type CallTrace, errorCode } from './call-trace.ts';

/** The model's attributes, one by one (no object of them: every prompt call sets these). */
function setModel(span: TraceSpan, provider: string, model: string): void {
  span.setAttribute('gen_ai.operation.name', 'chat');
  span.setAttribute('gen_ai.provider.name', provider);
  span.setAttribute('gen_ai.request.model', model);
}

/**
 * The answer's usage and finish reason, as the conventions have them: a list of the vendor's own
 * reasons (one answer asked for, one reason), the unified one where the vendor gave none. Its id and
 * the model that answered only for an exporter: the stored trace would keep a unique id a model
 * request for no reader (docs/traces.md, "Cost").
 */
function setUsage(
  span: TraceSpan,
  result: Pick<LlmResult, 'usage' | 'finishReason' | keyof LlmResponseFacts>,
  exporting: boolean,
): void {
  span.setAttribute('gen_ai.usage.input_tokens', result.usage.inputTokens);
  span.setAttribute('gen_ai.usage.output_tokens', result.usage.outputTokens);
  span.setAttribute('gen_ai.response.finish_reasons', [result.rawFinishReason ?? result.finishReason]);
  if (!exporting) return;
  span.setAttribute('gen_ai.response.id', result.responseId);
  span.setAttribute('gen_ai.response.model', result.responseModel);
}

/** One model request (a prompt agent's), as a span of the current call. */
export async function tracedGenerate(
  trace: CallTrace | undefined,
  generate: (request: LlmRequest) => Promise<LlmResult>,
  request: LlmRequest,
): Promise<LlmResult> {
  if (!trace?.tracer.recording) return generate(request);
  const span = trace.start(`chat ${request.model}`, { kind: 'client' });
  setModel(span, request.provider, request.model);
  const startedMs = Date.now();
  let firstTokenMs: number | undefined;
  const onText = request.onText;
  const timed = onText
    ? {
        ...request,
        onText: (text: string) => {
          firstTokenMs ??= Date.now() - startedMs;
          return onText(text);
        },
      }
    : request;
  try {
    const result = await generate(timed);
    setUsage(span, result, trace.tracer.exporting);
    span.setAttribute('agenthost.time_to_first_token_ms', firstTokenMs);
    span.end();
    return result;
  } catch (err) {
    span.end({ error: errorCode(err) });
    throw err;
  }
}

/** A tool loop's model requests, each recorded as a span once it answered. */
export function modelCallRecorder(
  trace: CallTrace | undefined,
  provider: string,
  model: string,
): ((call: LlmModelCall) => void) | undefined {
  if (!trace?.tracer.recording) return undefined;
  return (call) => {
    const span = trace.start(`chat ${model}`, { kind: 'client', startMs: call.startedMs });
    setModel(span, provider, model);
    setUsage(span, call, trace.tracer.exporting);
    span.end({ error: call.error, endMs: call.endedMs });
  };
}
