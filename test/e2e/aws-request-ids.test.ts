import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readEndpointsFile } from '../../functions/emulator/emulated-endpoints.ts';
import { ENV } from '../../functions/shared/env-names.ts';
import { requestIdTime, traceIdOfRequestId } from '../../functions/shared/request-ids.ts';
import { type Deployment, startDeployment } from '../helpers/deployment.ts';
import { dropTable, dynamoDbLocalEndpoint } from '../helpers/dynamodb-local.ts';
import {
  type DynamoDbWriteMeter,
  type MeteredWrite,
  startDynamoDbWriteMeter,
} from '../helpers/dynamodb-write-meter.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * The platform's own request ids on AWS: the emulated deployment's functions
 * mint `req_<UUID v7>` as the local server does, instead of reporting API Gateway's random id, so a
 * call's record is found from its id alone and its trace line needs no index entry of its own
 * (GSI2: two write units in the record's transaction). API Gateway's id (its access log's, the
 * `x-amzn-RequestId` it answers with) is kept on the call's log line. The deployment's DynamoDB is
 * reached through a meter (test/helpers/dynamodb-write-meter.ts) that reads the write units DynamoDB
 * Local reports for each write. The local platform's side of the same path is
 * test/api/trace-lookup.test.ts.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface AttrMap {
  [name: string]: { S?: string } | undefined;
}

/** The call's own log line, when `write` wrote it (a PutItem, or an item of a transaction). */
function lineIn(write: MeteredWrite, requestId: string): AttrMap | undefined {
  const isLine = (item: AttrMap | undefined) =>
    item?.sk?.S?.startsWith('LOG#') && item.request_id?.S === requestId;
  if (write.operation === 'PutItem') {
    const { Item } = JSON.parse(write.body) as { Item: AttrMap };
    return isLine(Item) ? Item : undefined;
  }
  if (write.operation !== 'TransactWriteItems') return undefined;
  const { TransactItems } = JSON.parse(write.body) as { TransactItems: { Put?: { Item: AttrMap } }[] };
  return TransactItems.map((t) => t.Put?.Item).find(isLine);
}

/** Whether `write` frees a concurrency slot (the last write of a finished call). */
const freesSlot = (write: MeteredWrite) =>
  write.operation === 'UpdateItem' && /"sk":\{"S":"LEASE#\d+"\}/.test(write.body);

describe('request ids and writes of a call on AWS (emulated deployment)', { timeout: 240_000 }, () => {
  let d: Deployment;
  let fake: FakeLlmProviders;
  let meter: DynamoDbWriteMeter;
  let engine: string;
  let key: string;
  let agentId: string;

  before(async () => {
    engine = await dynamoDbLocalEndpoint();
    meter = await startDynamoDbWriteMeter(engine);
    fake = await startFakeLlm();
    d = await startDeployment(
      'emulated',
      {
        OPENAI_API_KEY: 'sk-openai-test',
        OPENAI_BASE_URL: fake.baseUrls.openai,
        [ENV.emulatorDynamodbEndpoint]: meter.endpoint,
      },
      // Its own table on the engine behind the meter (dropped in `after`).
      { ownDynamoDb: true },
    );
    key = (await d.createAccount('ids', 'pro')).key;
    const published = await d.request<{ id: string }>('POST', '/agents', {
      key,
      body: {
        name: 'greeter',
        description: 'Greets.',
        supported_providers: ['openai'],
        default_models: { openai: 'gpt-test-mini' },
        prompt_template: 'Greet {{name}}',
      },
    });
    assert.equal(published.status, 201, published.text);
    agentId = published.body.id;
  });
  after(async () => {
    const table = d ? readEndpointsFile(d.dataDir)?.tableName : undefined;
    await d?.close();
    if (table) await dropTable(engine, table);
    await fake?.close();
    await meter?.close();
  });

  it('answers a time-ordered request id, finds the trace by it, keeps API Gateway’s id on the line, and writes no trace index entry', async () => {
    const perCall: number[] = [];
    let previous = '';
    for (let n = 0; n < 5; n++) {
      const from = meter.writes.length;
      const sent = Date.now();
      const res = await d.request<{ metadata: { request_id: string; trace_id: string } }>(
        'POST',
        '/ids/greeter/v1/run',
        { key, body: { name: `n${n}` } },
      );
      assert.equal(res.status, 200, res.text);
      const requestId = res.body.metadata.request_id;
      // The call's record and log line, then its slot's release, may follow the answer: waited for.
      const at = await waitFor(`the log line of ${requestId}`, () => {
        const i = meter.writes.findIndex((w, j) => j >= from && lineIn(w, requestId));
        return i >= 0 ? i : undefined;
      });
      const released = await waitFor(`the slot release of ${requestId}`, () => {
        const i = meter.writes.findIndex((w, j) => j > at && freesSlot(w));
        return i >= 0 ? i : undefined;
      });
      const record = meter.writes[at] as MeteredWrite;
      const writes = meter.writes.slice(from, released + 1);
      const units = writes.reduce((sum, w) => sum + w.units, 0);
      perCall.push(units);
      // What a prompt call writes, in write units (the cost bench reads the same meter).
      console.log(
        `call ${n}: ${units} write units in ${writes.map((w) => `${w.operation} ${w.units}`).join(', ')}; its line ${JSON.stringify(record.byPlace)}`,
      );
      // Slot, counter, record, line, release: one request each and no transaction (which DynamoDB
      // bills twice), so at most a unit each but the line's (its trace: up to 2 KB).
      assert.ok(
        writes.every((w) => w.operation !== 'TransactWriteItems'),
        'a call with nothing to settle writes no transaction',
      );
      assert.ok(units <= 6, `${units} write units`);

      // The local shape: req_<UUID v7>, carrying the time it was minted, in the order calls came.
      const minted = requestIdTime(requestId);
      assert.ok(minted !== undefined, `${requestId} is a platform-minted (UUID v7) id`);
      assert.ok(minted >= sent - 1 && minted <= Date.now(), `${requestId} carries the time of the request`);
      assert.ok(requestId > previous, 'ids sort in the order they were minted');
      previous = requestId;
      assert.equal(res.headers.get('x-request-id'), requestId);
      assert.equal(res.body.metadata.trace_id, traceIdOfRequestId(requestId));
      const gatewayId = res.headers.get('x-amzn-requestid') ?? '';
      assert.match(gatewayId, UUID, 'API Gateway answers with its own id');
      const line = lineIn(record, requestId) as AttrMap;
      assert.equal(line.gateway_request_id?.S, gatewayId, 'API Gateway’s id beside the platform’s');
      assert.equal(line.gsi2pk, undefined, 'the line is not indexed by its request id');
      assert.equal(record.byPlace.gsi2, undefined, 'no write to the trace index');

      const trace = await d.request<{ trace_id: string; spans: { name: string }[] }>(
        'GET',
        `/agents/${agentId}/calls/${requestId}/trace`,
        { key },
      );
      assert.equal(trace.status, 200, trace.text);
      assert.equal(trace.body.trace_id, traceIdOfRequestId(requestId));
      assert.ok(
        trace.body.spans.some((s) => s.name === 'call ids/greeter/v1'),
        JSON.stringify(trace.body.spans),
      );
    }
    console.log(`write units per prompt call: ${perCall.join(', ')}`);
  });
});
