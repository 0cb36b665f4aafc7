import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EcsServiceRunnerOptions } from '../../functions/adapters/aws/ecs-service-options.ts';
import { serviceTaskDefinition } from '../../functions/adapters/aws/ecs-service-task-definition.ts';
import {
  MAX_SERVICE_ENV_BYTES,
  MAX_SERVICE_SETTINGS_BYTES,
  SERVICE_SECRET_BYTES,
} from '../../functions/shared/byte-limits.ts';

/**
 * A service at the limits of its settings fits ECS's task definition (64 KiB): every split of
 * MAX_SERVICE_SETTINGS_BYTES between env and secrets, with the longest names, 100 variables, a long
 * deployment prefix and signed URLs as long as temporary credentials make them. Without the joint
 * limit, a full env and 100 long secret names came to 90 KB.
 */

const ECS_TASK_DEFINITION_BYTES = 64 * 1024;

const options = {
  cluster: 'agenthost-stateless-SandboxClusterABCDEF12-0123456789ab',
  executionRoleArn:
    'arn:aws:iam::123456789012:role/agenthost-stateless-ServiceHostingExecutionRole-ABCDEFGHIJKLMNOP',
  logGroup: '/agenthost/agenthost-stateless/services',
  region: 'ap-southeast-2',
  image:
    '123456789012.dkr.ecr.ap-southeast-2.amazonaws.com/cdk-hnb659fds-container-assets-123456789012-ap-southeast-2:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
  secretsPrefix: 'agenthost-production-secrets-prefix',
  account: '123456789012',
} as unknown as EcsServiceRunnerOptions;
/** A presigned GET made with a Lambda's temporary credentials (its session token is most of it). */
const signedUrl = `https://agenthost-bundles-123456789012-ap-southeast-2.s3.ap-southeast-2.amazonaws.com/bundles/${'k'.repeat(120)}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Security-Token=${'t'.repeat(1400)}&X-Amz-Signature=${'s'.repeat(64)}`;

function sizeAt(envBytes: number, secrets: number): number {
  const env: Record<string, string> = {};
  const per = Math.ceil(envBytes / 100);
  for (let i = 0, left = envBytes; left > 0; i++) {
    const name = `V${String(i).padStart(3, '0')}`;
    const value = 'v'.repeat(Math.max(0, Math.min(per, left) - name.length));
    env[name] = value;
    left -= name.length + value.length;
  }
  const secretNames = Array.from({ length: secrets }, (_, i) => `S${i}_`.padEnd(128, 'X'));
  const td = serviceTaskDefinition(
    options,
    {
      serviceId: '0f3c1a2b-aaaa-bbbb-cccc-1234567890ab',
      name: 'n'.repeat(63),
      workspaceId: '1f3c1a2b-aaaa-bbbb-cccc-1234567890ab',
      bundle: { data: Buffer.alloc(0), format: 'tar.gz' },
      bundleUrl: signedUrl,
      command: 'c'.repeat(4096),
      env: {
        ...env,
        PLATFORM_SERVICE_ID: '0f3c1a2b-aaaa-bbbb-cccc-1234567890ab',
        PLATFORM_AGENT: `${'o'.repeat(39)}/${'a'.repeat(64)}/999999`,
      },
      secretNames,
      secrets: {},
      http: true,
      instances: { min: 1, max: 100 },
    },
    signedUrl,
  );
  return Buffer.byteLength(JSON.stringify(td));
}

describe('a service’s task definition at the limits of its settings', () => {
  it('fits ECS’s 64 KiB for every split of env and secrets the platform accepts', () => {
    for (let envBytes = 0; envBytes <= MAX_SERVICE_ENV_BYTES; envBytes += 1024) {
      const secrets = Math.min(
        100,
        Math.floor((MAX_SERVICE_SETTINGS_BYTES - envBytes) / SERVICE_SECRET_BYTES),
      );
      const size = sizeAt(envBytes, secrets);
      assert.ok(
        size < ECS_TASK_DEFINITION_BYTES,
        `${envBytes} bytes of env and ${secrets} secrets: ${size} bytes`,
      );
    }
  });

  it('would not without the joint limit: a full env and 100 long secret names', () => {
    assert.ok(sizeAt(MAX_SERVICE_ENV_BYTES, 100) > ECS_TASK_DEFINITION_BYTES);
  });
});
