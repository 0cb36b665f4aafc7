import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  BatchGetSecretValueCommand,
  GetSecretValueCommand,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { ConfigError, parseConfig, withProviderSecret } from '../../functions/platform/config.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/**
 * In AWS the model providers' keys come from one Secrets Manager secret (the stack's provider-keys
 * secret, lib/constructs/llm-provider-keys.ts), whose ARN is all the run functions have in their
 * environment. Before, a deployed call answered 502 "The anthropic provider is not configured".
 */

const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:agenthost/platform/llm-AbCdEf';

describe('the provider-keys secret', () => {
  const base = parseConfig({}).llm;

  it('fills in what the environment leaves unset; the environment wins', () => {
    const fromEnv = parseConfig({ OPENAI_API_KEY: 'sk-env' }).llm;
    const llm = withProviderSecret(
      fromEnv,
      JSON.stringify({ ANTHROPIC_API_KEY: 'sk-ant-secret', OPENAI_API_KEY: 'sk-secret' }),
    );
    assert.equal(llm.anthropic.apiKey, 'sk-ant-secret');
    assert.equal(llm.openai.apiKey, 'sk-env');
    assert.equal(llm.google.apiKey, undefined);
    assert.deepEqual(withProviderSecret(base, '{}'), base, 'an empty secret changes nothing');
  });

  it('refuses a malformed secret with the field names, never a value', () => {
    assert.throws(
      () => withProviderSecret(base, 'not json sk-leak'),
      (err: Error) => {
        assert.ok(err instanceof ConfigError);
        assert.doesNotMatch(err.message, /sk-leak/);
        return true;
      },
    );
    assert.throws(
      () => withProviderSecret(base, JSON.stringify({ ANTHROPIC_API_KEY: 42, ANTHROPC_API_KEY: 'sk-typo' })),
      (err: Error) => {
        assert.match(err.message, /ANTHROPIC_API_KEY/);
        assert.match(err.message, /ANTHROPC_API_KEY/);
        assert.doesNotMatch(err.message, /sk-typo/);
        return true;
      },
    );
  });
});

describe('an AWS deployment calls models with the keys from the secret', () => {
  const secrets = mockClient(SecretsManagerClient);
  let fake: FakeLlmProviders;
  let p: TestPlatform;

  before(async () => {
    fake = await startFakeLlm();
    secrets.on(GetSecretValueCommand, { SecretId: SECRET_ARN }).resolves({
      SecretString: JSON.stringify({
        ANTHROPIC_API_KEY: 'sk-ant-from-secrets-manager',
        ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
      }),
    });
    secrets.on(BatchGetSecretValueCommand).resolves({ SecretValues: [], Errors: [] });
    // As the stack configures the calls function: the ARN, no key.
    p = await startTestPlatform({ PLATFORM_LLM_SECRET_ARN: SECRET_ARN }, 'dynamodb', {}, { inMemory: true });
  });
  after(async () => {
    await p.close();
    await fake.close();
    secrets.restore();
  });

  it('a prompt agent call answers 200, the request carrying the secret’s key', async () => {
    const o = await p.createAccount('keysco', 'pro');
    const published = await p.request('POST', '/agents', {
      key: o.key,
      body: {
        name: 'hello',
        description: 'Says hello.',
        supported_providers: ['anthropic'],
        prompt_template: 'Say hello to {{name}}',
      },
    });
    assert.equal(published.status, 201, published.text);
    fake.enqueue({ text: 'hello, world' });
    const res = await p.request<{ data: unknown }>('POST', '/keysco/hello/v1/run', {
      key: o.key,
      body: { name: 'world' },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data, { text: 'hello, world' });
    assert.equal(fake.calls.at(-1)?.headers['x-api-key'], 'sk-ant-from-secrets-manager');
    // Read once per container, not per call.
    fake.enqueue({ text: 'again' });
    await p.request('POST', '/keysco/hello/v1/run', { key: o.key, body: { name: 'again' } });
    assert.equal(secrets.commandCalls(GetSecretValueCommand, { SecretId: SECRET_ARN }).length, 1);
  });
});
