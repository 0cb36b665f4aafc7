import { formatSpanMs, type TraceSpan } from './trace-waterfall.ts';

/** One fact worth seeing in a span's row: `model gpt-4o`, `tokens 12 in, 3 out`. */
export interface SpanFact {
  label: string;
  value: string;
}

/**
 * What a reader looks for in each kind of span (docs/traces.md names their attributes): the model
 * and tokens of a model request, the exit of a command, the agent of a call or a sub-agent's hop.
 * Everything else is in the span's attributes, shown when its row is opened. The kind is read from
 * the attributes the platform sets rather than from the name, which for a command is the program.
 */
export function spanFacts(span: TraceSpan): SpanFact[] {
  const a = span.attributes;
  const facts: SpanFact[] = [];
  // A list (the finish reasons) reads as its items.
  const add = (label: string, value: string | number | boolean | string[] | undefined) => {
    const text = Array.isArray(value) ? value.join(', ') : value;
    if (text !== undefined && text !== '') facts.push({ label, value: String(text) });
  };
  const operation = a['gen_ai.operation.name'];
  if (span.name.startsWith('call ')) {
    add('agent', span.agent);
    add('outcome', a['agenthost.outcome']);
    add('HTTP', a['http.response.status_code']);
  } else if (operation === 'chat') {
    add('model', a['gen_ai.request.model']);
    add('provider', a['gen_ai.provider.name']);
    const input = a['gen_ai.usage.input_tokens'];
    const output = a['gen_ai.usage.output_tokens'];
    if (input !== undefined || output !== undefined)
      add('tokens', `${input ?? '?'} in, ${output ?? '?'} out`);
    const firstToken = a['agenthost.time_to_first_token_ms'];
    if (typeof firstToken === 'number') add('first token', formatSpanMs(firstToken));
    add('finish', a['gen_ai.response.finish_reasons']);
  } else if (operation === 'invoke_agent') {
    add('agent', a['gen_ai.agent.name']);
    add('tool', a['gen_ai.tool.name']);
  } else if (operation === 'execute_tool') {
    add('tool', a['gen_ai.tool.name']);
  } else if (span.name.startsWith('exec ')) {
    add('exit code', a['process.exit.code']);
    add('signal', a['process.exit.signal']);
    if (a['agenthost.timed_out'] === true) add('timed out', 'yes');
    const cpu = a['agenthost.cpu_ms'];
    if (typeof cpu === 'number') add('CPU', formatSpanMs(cpu));
  } else if (span.name === 'sandbox') {
    add('sandbox', a['agenthost.sandbox.kind']);
  } else if (span.name === 'admission') {
    add('quota', a['agenthost.quota']);
  }
  return facts;
}
