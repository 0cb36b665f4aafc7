import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { addAgenthostStacks } from '../../lib/agenthost-app.ts';
import { foldedTemplate } from '../helpers/folded-template.ts';
import { templatesApp } from '../helpers/synthesized-stacks.ts';

/**
 * The API stage's throttle: one ceiling for every account together, which an
 * infra team sizes to its account's Lambda concurrency (`-c apiThrottleRps=N -c apiThrottleBurst=N`;
 * docs/deploy.md, "Context values"); 100 a second with bursts of 200 unless told.
 */

const outdir = mkdtempSync(join(tmpdir(), 'agenthost-cdk-throttle-'));
after(() => rmSync(outdir, { recursive: true, force: true }));

function stageThrottle(apiThrottle?: { rps?: number; burst?: number }) {
  const app = templatesApp(outdir);
  const { stateless } = addAgenthostStacks(app, apiThrottle ? { apiThrottle } : {});
  const stages = Object.values(foldedTemplate(stateless).findResources('AWS::ApiGateway::Stage')) as {
    Properties: { MethodSettings?: Record<string, unknown>[] };
  }[];
  assert.equal(stages.length, 1);
  const all = stages[0]?.Properties.MethodSettings?.find(
    (m) => m.HttpMethod === '*' && m.ResourcePath === '/*',
  );
  return { rps: all?.ThrottlingRateLimit, burst: all?.ThrottlingBurstLimit };
}

describe('stateless stack: the API stage’s throttle', () => {
  test('100 a second with bursts of 200 by default', () => {
    assert.deepEqual(stageThrottle(), { rps: 100, burst: 200 });
  });

  test('as the context gives it; a rate alone brings the burst up to it', () => {
    assert.deepEqual(stageThrottle({ rps: 50, burst: 80 }), { rps: 50, burst: 80 });
    assert.deepEqual(stageThrottle({ rps: 500 }), { rps: 500, burst: 500 });
  });

  test('a rate or burst that is no whole number in range, or a burst under the rate, fails the synthesis', () => {
    for (const bad of [
      { rps: 0 },
      { rps: 1.5 },
      { rps: 20_000 },
      { rps: 100, burst: 50 },
      { burst: Number.NaN },
    ]) {
      assert.throws(
        () => stageThrottle(bad),
        /apiThrottle(Rps|Burst) must be a whole number/,
        JSON.stringify(bad),
      );
    }
  });
});
