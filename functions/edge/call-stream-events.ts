/*
 * The events of a streamed call (streamed-call.ts writes them; docs/calls.md, "Streamed calls"),
 * as /openapi.json documents them: each Server-Sent Event's name and the JSON object its `data:`
 * line holds. test/edge/openapi-document.test.ts checks every event a streamed call sends against
 * these.
 */
import * as z from 'zod';
import { callEnvelopeSchema } from '../core/calls/call-schemas.ts';
import type { StreamEventDoc } from '../platform/routes/route-def.ts';
import { errorEnvelopeSchema } from './envelope.ts';

export const CALL_STREAM_EVENTS: readonly StreamEventDoc[] = [
  {
    event: 'delta',
    description:
      'A piece of a prompt agent’s answer, as the model writes it; for a managed loop, the model’s last words once it ends.',
    data: z.object({ text: z.string() }),
  },
  {
    event: 'step',
    description:
      'A managed loop’s tool call once it ended; a custom tool that calls one of the orchestrator’s dependencies is kind `agent`, named by that agent. No arguments, no results.',
    data: z.object({
      kind: z.enum(['tool', 'agent']),
      name: z.string().describe('The tool’s name, or the called agent’s org/name/version'),
      outcome: z.enum(['ok', 'error']),
      duration_ms: z.number(),
    }),
  },
  {
    event: 'result',
    description: 'Last: the success envelope, exactly the body a plain call of the same input answers.',
    data: callEnvelopeSchema,
  },
  {
    event: 'error',
    description:
      'Last, instead of `result`, when the call fails after the stream began: the error envelope (LLM_ERROR for a model that failed mid-stream, TIMEOUT, …).',
    data: errorEnvelopeSchema,
  },
];
