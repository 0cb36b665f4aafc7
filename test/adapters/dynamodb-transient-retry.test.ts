/**
 * DynamoDB's "not now" answers (a transaction cancelled by TransactionConflict, a write refused
 * while a transaction holds its item, throttling) are never a failed condition: the DynamoDB
 * adapter retries them within its budget, and past it answers StoreBusyError, a retryable 500.
 * First the adapter's classification on a mocked client (the service's exceptions, as the SDK
 * raises them), then the call admission on DynamoDB Local behind the fault injector: 429 "used
 * up" only when the counter's condition failed; and what a client sees over HTTP when the
 * refusals outlast the budget.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  DynamoDBClient,
  ProvisionedThroughputExceededException,
  TransactionCanceledException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDbStore } from '../../functions/adapters/aws/dynamodb-store.ts';
import { TIER_LIMITS } from '../../functions/core/accounts/tiers.ts';
import type { AuthContext } from '../../functions/core/api-keys/api-keys.ts';
import { admitCall } from '../../functions/core/calls/quotas.ts';
import { dailyCounterKeys, utcDay } from '../../functions/core/usage/daily-usage.ts';
import type { CoreDeps } from '../../functions/ports/core-deps.ts';
import {
  cond,
  type Store,
  StoreBusyError,
  TransactionCanceledError,
  type TransactOp,
} from '../../functions/ports/store.ts';
import { withStoreDeadline } from '../../functions/ports/store-deadline.ts';
import { PlatformError } from '../../functions/shared/errors.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { faultyDynamoDbLocalBackend, type StoreBackend } from '../helpers/store-backends.ts';

const BUDGET_MS = 1_000;

/** StoreBusyError as a client sees it: a retryable 503 with a wait, saying nothing was changed. */
function isBusy(err: unknown): boolean {
  assert.ok(err instanceof StoreBusyError, `expected StoreBusyError, got ${String(err)}`);
  assert.ok(err instanceof PlatformError);
  assert.ok(!(err instanceof TransactionCanceledError));
  assert.equal(err.code, 'SERVICE_UNAVAILABLE');
  assert.equal(err.status, 503);
  assert.equal(err.details?.cause, 'store_busy');
  assert.equal(err.retryable, true);
  assert.equal(err.details?.suggested_wait_time, 1);
  assert.match(err.message, /busy .* nothing was changed, retry/);
  return true;
}

describe('DynamoDbStore: conflicts and throttling are retried, never a failed condition (mocked client)', () => {
  const mockDocumentClient = () => mockClient(DynamoDBDocumentClient);
  let docMock: ReturnType<typeof mockDocumentClient>;
  let store: DynamoDbStore;

  before(() => {
    docMock = mockDocumentClient();
    store = new DynamoDbStore({
      tableName: 'agenthost',
      client: new DynamoDBClient({
        region: 'us-east-1',
        credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
      }),
      nowSeconds: () => 1_750_000_000,
      retry: { budgetMs: BUDGET_MS },
    });
  });
  after(async () => {
    docMock.restore();
    await store.close();
  });

  const transaction = (): TransactOp[] => [
    {
      name: 'counter',
      update: { pk: 'A', sk: 'DAY' },
      spec: { add: { calls: 1 } },
      condition: cond.lt('calls', 5),
    },
    { name: 'slot', put: { pk: 'A', sk: 'LEASE#0' }, condition: cond.notExists() },
  ];
  const cancelled = (...codes: string[]) =>
    new TransactionCanceledException({
      message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${codes.join(', ')}]`,
      $metadata: {},
      CancellationReasons: codes.map((Code) => (Code === 'None' ? { Code } : { Code, Message: 'refused' })),
    });

  it('retries a transaction cancelled only by TransactionConflict, and it lands', async () => {
    docMock.reset();
    docMock
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled('TransactionConflict', 'None'))
      .rejectsOnce(cancelled('None', 'ThrottlingError'))
      .rejectsOnce(cancelled('ProvisionedThroughputExceeded', 'None'))
      .resolves({});
    await store.transactWrite(transaction());
    assert.equal(docMock.commandCalls(TransactWriteCommand).length, 4);
  });

  it('answers conflicts that outlast the budget with StoreBusyError, never TransactionCanceledError', async () => {
    docMock.reset();
    docMock.on(TransactWriteCommand).rejects(cancelled('TransactionConflict', 'None'));
    const started = Date.now();
    await assert.rejects(store.transactWrite(transaction()), isBusy);
    assert.ok(Date.now() - started < 2 * BUDGET_MS, 'gave up at the budget');
    assert.ok(docMock.commandCalls(TransactWriteCommand).length > 2, 'retried until then');
  });

  it('answers a failed condition at once, even beside a conflict; only it counts as cancelling', async () => {
    docMock.reset();
    docMock.on(TransactWriteCommand).rejects(cancelled('TransactionConflict', 'ConditionalCheckFailed'));
    await assert.rejects(store.transactWrite(transaction()), (err: unknown) => {
      assert.ok(err instanceof TransactionCanceledError);
      assert.ok(err.conditionFailed('slot') && err.cancelledBy('slot'));
      assert.ok(!err.conditionFailed('counter') && !err.cancelledBy('counter'), 'a conflict is no answer');
      return true;
    });
    assert.equal(docMock.commandCalls(TransactWriteCommand).length, 1);
  });

  it('lets a cancellation for a malformed request (ValidationError) through as the service’s error', async () => {
    docMock.reset();
    const invalid = cancelled('ValidationError', 'None');
    docMock.on(TransactWriteCommand).rejects(invalid);
    await assert.rejects(store.transactWrite(transaction()), (err) => err === invalid);
    assert.equal(docMock.commandCalls(TransactWriteCommand).length, 1);
  });

  it('gives up at the fixed budget even when the call it is made for has longer', async () => {
    docMock.reset();
    const clearsAt = Date.now() + 1.6 * BUDGET_MS;
    docMock.on(TransactWriteCommand).callsFake(() => {
      if (Date.now() < clearsAt) throw cancelled('TransactionConflict', 'None');
      return {};
    });
    const started = Date.now();
    await assert.rejects(
      withStoreDeadline(started + 3 * BUDGET_MS, () => store.transactWrite(transaction())),
      isBusy,
    );
    assert.ok(
      Date.now() < clearsAt,
      `gave up within the budget (${Date.now() - started} ms), not at the call's deadline`,
    );
  });

  it('gives up at the call’s deadline when it comes before the fixed budget', async () => {
    docMock.reset();
    docMock.on(TransactWriteCommand).rejects(cancelled('TransactionConflict', 'None'));
    const started = Date.now();
    await assert.rejects(
      withStoreDeadline(started + 250, () => store.transactWrite(transaction())),
      isBusy,
    );
    assert.ok(Date.now() - started < 0.6 * BUDGET_MS, `gave up at the deadline (${Date.now() - started} ms)`);
  });

  it('keeps the fixed budget for what a call writes after its deadline (its record, its slot)', async () => {
    docMock.reset();
    const clearsAt = Date.now() + 0.4 * BUDGET_MS;
    docMock.on(TransactWriteCommand).callsFake(() => {
      if (Date.now() < clearsAt) throw cancelled('TransactionConflict', 'None');
      return {};
    });
    await withStoreDeadline(Date.now() - 1, () => store.transactWrite(transaction()));
    assert.ok(docMock.commandCalls(TransactWriteCommand).length > 1);
  });

  it('retries single requests refused for a transaction in progress or throttled past the SDK', async () => {
    const conflict = () =>
      new TransactionConflictException({ message: 'Transaction is ongoing for the item', $metadata: {} });
    const throttled = () =>
      new ProvisionedThroughputExceededException({ message: 'The level of configured …', $metadata: {} });
    docMock.reset();
    docMock.on(PutCommand).rejectsOnce(conflict()).resolves({});
    docMock
      .on(UpdateCommand)
      .rejectsOnce(conflict())
      .rejectsOnce(throttled())
      .resolves({ Attributes: { n: 3 } });
    docMock.on(DeleteCommand).rejectsOnce(throttled()).resolves({});
    docMock
      .on(GetCommand)
      .rejectsOnce(throttled())
      .resolves({ Item: { pk: 'A', sk: 'B' } });
    await store.put({ pk: 'A', sk: 'B' }, { condition: cond.notExists() });
    assert.equal(await store.atomicAdd({ pk: 'A', sk: 'N' }, 'n', 1, { condition: cond.lt('n', 5) }), 3);
    await store.delete({ pk: 'A', sk: 'B' });
    assert.deepEqual(await store.get({ pk: 'A', sk: 'B' }), { pk: 'A', sk: 'B' });
    assert.equal(docMock.commandCalls(PutCommand).length, 2);
    assert.equal(docMock.commandCalls(UpdateCommand).length, 3);

    // Past the budget: busy, not a failed condition (ConditionFailedError) and not the raw exception.
    docMock.reset();
    docMock.on(UpdateCommand).rejects(conflict());
    await assert.rejects(
      store.atomicAdd({ pk: 'A', sk: 'N' }, 'n', 1, { condition: cond.lt('n', 5) }),
      isBusy,
    );
  });
});

describe('call admission on DynamoDB Local behind the fault injector: 429 only for a used-up quota', () => {
  let backend: StoreBackend;
  let store: Store;
  let deps: CoreDeps;
  const nowMs = Date.parse('2026-06-01T10:00:00Z');
  const auth: AuthContext = {
    accountId: `admission-${process.pid}`,
    org: 'admission',
    tier: 'free',
    personalWorkspaceId: 'ws',
    keyId: 'k',
    agent: null,
  };
  const limit = TIER_LIMITS.free.dailyCalls;
  const counter = dailyCounterKeys.calls(auth.accountId, utcDay(new Date(nowMs)));

  before(async () => {
    backend = await faultyDynamoDbLocalBackend('agenthost-admission', {
      conflictShare: 0,
      throttleShare: 0,
      writeConflictShare: 0,
    });
    store = backend.open(() => Math.floor(nowMs / 1000));
    deps = { store, clock: { now: () => new Date(nowMs) } } as unknown as CoreDeps;
  });
  after(async () => {
    await store.close();
    await backend.close();
  });

  it('an admission whose writes only ever conflict answers a retryable 503 and counts nothing', async (t) => {
    const faults = backend.faults;
    assert.ok(faults);
    await store.put({ ...counter, calls: limit - 1 });
    faults.shares.writeConflictShare = 1;
    t.after(() => {
      faults.shares.writeConflictShare = 0;
    });
    await assert.rejects(admitCall(deps, auth, nowMs + 1_000), isBusy);
    assert.ok(faults.writeConflicts > 1);
    faults.shares.writeConflictShare = 0;
    assert.equal((await store.get(counter))?.calls, limit - 1);
    // The quota was not used up: the call is admitted once the conflicts stop.
    await (await admitCall(deps, auth, nowMs + 1_000)).finish([]);
    // Now it is: the counter's condition fails, and that alone is a 429.
    await assert.rejects(admitCall(deps, auth, nowMs + 1_000), (err: unknown) => {
      assert.ok(err instanceof PlatformError && err.code === 'RATE_LIMITED', String(err));
      assert.match(err.message, /Daily quota of \d+ calls .* is used up/);
      return true;
    });
  });
});

describe('what a client sees while DynamoDB keeps refusing writes (over HTTP)', () => {
  let p: TestPlatform;
  let llm: FakeLlmProviders;
  before(async () => {
    llm = await startFakeLlm();
    p = await startTestPlatform(
      { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: llm.baseUrls.anthropic },
      'dynamodb-faults',
      {},
      { inMemory: true },
    );
  });
  after(async () => {
    await p.close();
    await llm.close();
  });

  /** Every write (transactions and single items) conflicts for `ms` of real time (reads pass). */
  const conflictFor = (ms: number) => {
    const faults = p.faults;
    assert.ok(faults);
    Object.assign(faults.shares, { conflictShare: 1, writeConflictShare: 1, throttleShare: 0 });
    return new Promise<void>((resolve) =>
      setTimeout(() => {
        Object.assign(faults.shares, { conflictShare: 0, writeConflictShare: 0 });
        resolve();
      }, ms),
    );
  };
  const publishGreeter = async (key: string) => {
    const res = await p.request('POST', '/agents', {
      key,
      body: {
        name: 'greet',
        description: 'Greets.',
        supported_providers: ['any'],
        prompt_template: 'Say hello',
      },
    });
    assert.equal(res.status, 201, res.text);
  };

  it('retries a call’s admission for 3 s, not its whole deadline, then answers 503 with Retry-After; it lands once the store is free', async () => {
    const caller = await p.createAccount('patientco', 'pro');
    await publishGreeter(caller.key);
    const cleared = conflictFor(15_000);
    const started = Date.now();
    const res = await p.request('POST', '/patientco/greet/v1/run', { key: caller.key, body: {} });
    const waited = Date.now() - started;
    await cleared;
    assert.equal(res.status, 503, res.text);
    assert.equal(res.headers.get('retry-after'), '1');
    assert.equal(errorOf(res).code, 'SERVICE_UNAVAILABLE');
    assert.equal((res.body.error as { details?: { cause?: string } }).details?.cause, 'store_busy');
    // Its slot's write and the give-back of that slot each get the 3 s: about 6 s, never its 29 s.
    assert.ok(waited < 10_000, `gave up after ${waited} ms, long before its 29 s deadline`);
    assert.equal(llm.calls.length, 0, 'the model was never asked');
    assert.ok(p.faults && p.faults.writeConflicts > 10, 'the admission met conflicts for seconds');
    const again = await p.request('POST', '/patientco/greet/v1/run', { key: caller.key, body: {} });
    assert.equal(again.status, 200, again.text);
  });

  it('stops retrying at the caller’s X-Platform-Deadline-Ms, before the 3 s a route without a call gets', async () => {
    const caller = await p.createAccount('hurriedco', 'pro');
    await publishGreeter(caller.key);
    const cleared = conflictFor(2_000);
    const deadline = p.clock.now().getTime() + 600;
    const res = await p.request('POST', '/hurriedco/greet/v1/run', {
      key: caller.key,
      body: {},
      headers: { 'x-platform-deadline-ms': String(deadline) },
    });
    await cleared;
    // Within the 3 s budget alone the admission would have landed once the conflicts stopped at 2 s.
    assert.equal(res.status, 503, res.text);
    assert.equal(errorOf(res).is_retryable, true);
    assert.match(errorOf(res).message, /data store is busy/);
  });

  it('answers a retryable 503 with Retry-After that says nothing changed; the same request lands once it stops', async () => {
    const faults = p.faults;
    assert.ok(faults);
    Object.assign(faults.shares, { conflictShare: 1, writeConflictShare: 1, throttleShare: 0 });
    const refused = await p.request('POST', '/tasks', { body: { title: 'busy' } });
    Object.assign(faults.shares, { conflictShare: 0, writeConflictShare: 0 });
    assert.equal(refused.status, 503, refused.text);
    assert.equal(refused.headers.get('retry-after'), '1');
    const error = errorOf(refused);
    assert.equal(error.code, 'SERVICE_UNAVAILABLE');
    assert.equal(error.is_retryable, true);
    assert.equal((refused.body.error as { suggested_wait_time?: number }).suggested_wait_time, 1);
    assert.match(error.message, /data store is busy .* nothing was changed, retry/);
    const listed = await p.request<{ total: number }>('GET', '/tasks');
    assert.equal(listed.body.total, 0, 'nothing was written');
    const created = await p.request('POST', '/tasks', { body: { title: 'busy' } });
    assert.equal(created.status, 201, created.text);
  });
});
