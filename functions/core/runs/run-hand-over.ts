/**
 * What a run's call throws where its stream opens once the run was handed to the run worker
 * (ports/run-worker.ts; edge/async-call.ts): the call stops there, in the request that started it,
 * and leaves what it took to the worker, which carries the run on from its recorded steps: its
 * concurrency slot (held again under the same lease), its charge (settled with the record the
 * worker writes) and its run credential. So the call writes no record, refunds nothing and frees
 * no slot (core/calls/gateway.ts, CallReport.handOver).
 */
export class RunHandedOver extends Error {
  constructor(runId: string) {
    super(`run ${runId} handed over to the run worker`);
    this.name = 'RunHandedOver';
  }
}
