import type { CallHttpRequest } from '../core/calls/call-context.ts';
import { callAgent } from '../core/calls/gateway.ts';
import { describeRun, getRun, listRuns } from '../core/runs/call-run-reads.ts';
import { cancelRun } from '../core/runs/run-cancel.ts';
import { readRunEvents } from '../core/runs/run-event-reads.ts';
import { checkRunWebhook, WEBHOOK_HEADER } from '../core/runs/run-webhook.ts';
import { jsonAnswer, sseAnswer } from '../edge/answers.ts';
import { asyncCall } from '../edge/async-call.ts';
import type { Operations } from '../edge/operations.ts';
import { prefersAsync } from '../edge/prefer-header.ts';
import { followRunEvents } from '../edge/run-event-stream.ts';
import { streamedCall, wantsEventStream } from '../edge/streamed-call.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';
import { routes } from '../platform/routes.ts';
import { invalidInput } from '../shared/errors.ts';
import { createStreamedModuleHandler } from './streamed-module-handler.ts';

export const operations: Operations<'calls'> = {
  callAgent: async ({
    deps,
    auth,
    params,
    body,
    requestId,
    gatewayRequestId,
    path,
    header,
    waitUntil,
    onDelivered,
  }) => {
    const request = {
      ...params,
      body: body.source,
      contentType: body.contentType,
      headers: header,
      requestId,
      gatewayRequestId,
      waitUntil,
      onDelivered,
      // For the call's exported span alone (OpenTelemetry's HTTP server conventions).
      http: deps.tracer.exporting ? httpRequest(deps.config.publicUrl, path) : undefined,
    };
    // `Prefer: respond-async`: 202 with the call's run once it is admitted (docs/runs.md). A run
    // credential's sub-call is part of its orchestrator's run and is answered as it waits.
    const runs = prefersAsync(header('prefer')) && !auth.service;
    const webhook = header(WEBHOOK_HEADER.toLowerCase());
    if (webhook !== undefined && !runs)
      throw invalidInput([
        {
          field: `header.${WEBHOOK_HEADER.toLowerCase()}`,
          message:
            'a completion webhook is a run’s: send it with Prefer: respond-async (a sub-call is never a run)',
        },
      ]);
    if (runs) {
      // Checked before anything is admitted or charged: a refused webhook starts no run.
      const webhookUrl = webhook === undefined ? null : await checkRunWebhook(deps, auth.accountId, webhook);
      const answer = await asyncCall(deps, { requestId, onDelivered, webhookUrl }, (stream, signal, steps) =>
        // Nobody waits on the answer: the call's record is written before the run ends.
        callAgent(deps, auth, {
          ...request,
          waitUntil: undefined,
          onDelivered: undefined,
          stream,
          signal,
          steps,
          run: true,
        }),
      );
      return answer instanceof Response
        ? answer
        : jsonAnswer(answer.body, requestId, { headers: answer.headers });
    }
    // An Accept that prefers text/event-stream: the call as Server-Sent Events (docs/calls.md, "Streamed calls").
    const answer = wantsEventStream(header('accept'))
      ? await streamedCall(
          requestId,
          // Its record written before the `result` event, not handed to waitUntil: the event is
          // the caller's answer, and a caller that reads the call's record or trace on it must find
          // it (docs/calls.md, "The answer and the record"); on AWS the stream's end, not that
          // event, waited for the work a Lambda's answer leaves.
          (stream, signal) => callAgent(deps, auth, { ...request, waitUntil: undefined, stream, signal }),
          { logger: deps.logger, waitUntil },
        )
      : await callAgent(deps, auth, request);
    return answer instanceof Response
      ? answer
      : jsonAnswer(answer.body, requestId, { headers: answer.headers });
  },
  listRuns: ({ deps, auth, query }) => listRuns(deps, auth, query),
  getRun: ({ deps, auth, params }) => getRun(deps, auth, params.run_id),
  cancelRun: async ({ deps, auth, params, requestId }) => {
    const { run, ended } = await cancelRun(deps, auth, params.run_id);
    // Ended: the run as GET answers it; still stopping: 202 with the cancel under way.
    return ended ? getRun(deps, auth, run.run_id) : jsonAnswer(describeRun(run), requestId, { status: 202 });
  },
  getRunEvents: async ({ deps, auth, params, query, header }) => {
    const after = lastEventId(header('last-event-id')) ?? query.after ?? 0;
    const read = (from: number) => readRunEvents(deps, auth, params.run_id, from, query.limit);
    // Read before answering: a run that is not the caller's is the ordinary 404, whatever the Accept.
    const first = await read(after);
    if (wantsEventStream(header('accept')))
      return sseAnswer(followRunEvents(read, after, first, { logger: deps.logger }));
    return { events: first.events, ended: first.ended, next_after: first.events.at(-1)?.id ?? after };
  },
};

/** SSE's Last-Event-ID as an event number (the route's headers schema documents its form). */
function lastEventId(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,10}$/.test(value.trim()))
    throw invalidInput([
      { field: 'header.last-event-id', message: 'must be the id of an event of this run' },
    ]);
  return Number(value.trim());
}

/** The call route's request as its span says it: the client's scheme is the public URL's. */
function httpRequest(publicUrl: string | undefined, path: string): CallHttpRequest {
  const { method, path: route } = routes.callAgent;
  return { method, route, path, scheme: publicUrl?.startsWith('https:') ? 'https' : 'http' };
}

// The call route's integration streams (lib/stateless-stack.ts): its answer is written as it comes.
export const handler = createStreamedModuleHandler('calls', operations, lambdaDeps);
