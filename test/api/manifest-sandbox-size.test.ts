import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/**
 * A manifest's `sandbox`: the vCPUs and memory its runs need, which the AWS
 * sandbox rounds up to the smallest Fargate size. Only Fargate's vCPU steps, and within the
 * publishing account's tier (Free 1 vCPU and 2 GiB): an author cannot publish, nor fork into, a
 * size their tier does not allow; the field belongs to the version (PATCH cannot change it).
 */

describe('the manifest’s sandbox size', () => {
  let p: TestPlatform;
  let free: string;
  let pro: string;
  const tool = (name: string, sandbox: unknown) => ({
    name,
    type: 'tool',
    description: 'A tool.',
    supported_providers: ['any'],
    runtime: { command: 'cat' },
    sandbox,
  });

  before(async () => {
    p = await startTestPlatform({}, 'sqlite', {}, { inMemory: true });
    free = (await createAccount(p.deps, { org: 'size-free', tier: 'free' })).api_key;
    pro = (await createAccount(p.deps, { org: 'size-pro', tier: 'pro' })).api_key;
  });
  after(() => p.close());

  const publish = (key: string, body: unknown) =>
    p.request<{ id: string; sandbox?: unknown }>('POST', '/agents?allow_no_secrets=true', {
      key,
      body,
    });

  it('within the tier: kept as declared', async () => {
    const res = await publish(free, tool('small', { cpu: 0.25, memory_mb: 512 }));
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body.sandbox, { cpu: 0.25, memory_mb: 512 });
    const big = await publish(pro, tool('big', { cpu: 2, memory_mb: 4096 }));
    assert.equal(big.status, 201, big.text);
  });

  it('past the tier: 400 naming the field and the tier’s limit', async () => {
    const res = await publish(free, tool('too-big', { cpu: 2, memory_mb: 4096 }));
    assert.equal(res.status, 400, res.text);
    assert.deepEqual(errorOf(res).fields, ['body.sandbox.cpu', 'body.sandbox.memory_mb']);
    assert.match(errorOf(res).message, /must be at most 1 on the free tier/);
    assert.match(errorOf(res).message, /must be at most 2048 on the free tier/);
  });

  it('only Fargate’s vCPU steps and a memory in range; not empty', async () => {
    for (const [sandbox, field] of [
      [{ cpu: 0.3 }, 'body.sandbox.cpu'],
      [{ memory_mb: 256 }, 'body.sandbox.memory_mb'],
      [{ memory_mb: 1024.5 }, 'body.sandbox.memory_mb'],
      [{}, 'body.sandbox'],
      [{ cpu: 1, disk: 5 }, 'body.sandbox.disk'],
    ] as const) {
      const res = await publish(pro, tool('odd', sandbox));
      assert.equal(res.status, 400, `${JSON.stringify(sandbox)}: ${res.text}`);
      const fields = errorOf(res).fields;
      assert.ok(fields.includes(field), `${JSON.stringify(sandbox)}: ${JSON.stringify(fields)}`);
    }
  });

  it('belongs to the version: PATCH cannot change it', async () => {
    const res = await publish(pro, tool('fixed', { cpu: 1 }));
    assert.equal(res.status, 201, res.text);
    const patched = await p.request('PATCH', `/agents/${res.body.id}`, {
      key: pro,
      body: { sandbox: { cpu: 4 } },
    });
    assert.equal(patched.status, 400, patched.text);
  });
});
