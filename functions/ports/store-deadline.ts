import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The instant by which a store's retries of a "not now" answer must end (DynamoDB's transaction
 * conflicts and throttling: docs/data-model.md, "Transient failures"). A call sets it to its own
 * deadline around the work it does, so every store operation made on its behalf (admission, the
 * ledger, a sub-call's revisions) keeps retrying while the call still has time and never past it,
 * without every port method taking a deadline argument. Operations outside any call, and those a
 * call makes after its deadline has passed (its record, the release of its slot), get the store's
 * own fixed budget instead.
 */
const scope = new AsyncLocalStorage<number>();

/** Runs `work` with store retries bounded by `processMs` (epoch ms on the process clock, Date.now). */
export function withStoreDeadline<T>(processMs: number, work: () => Promise<T>): Promise<T> {
  return scope.run(processMs, work);
}

/** The deadline of the call this operation is made for, if any (epoch ms on the process clock). */
export function storeDeadline(): number | undefined {
  return scope.getStore();
}
