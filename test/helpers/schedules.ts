import { BackgroundNotifier } from '../../functions/adapters/local/background-notifier.ts';
import { LocalScheduler } from '../../functions/platform/local-deps.ts';
import type { FakeLlmProviders } from './fake-llm-providers.ts';
import { type Backend, startTestPlatform, type TestPlatform } from './platform.ts';

/**
 * A notifier with millisecond backoffs, so retry tests do not wait seconds; `mode` is the
 * platform's (its URL rules: loopback receivers are refused in AWS mode).
 */
export const fastNotifier = (mode: 'local' | 'aws' = 'local') =>
  new BackgroundNotifier({ mode, backoffMs: [10, 20], timeoutMs: 2000 }, () => undefined);

/**
 * The test platform wired to the fake LLM providers, with the fast notifier. On the DynamoDB store
 * (AWS mode against DynamoDB Local) the scheduler is the local one: EventBridge is not reachable here, and
 * its adapter is tested on its own with aws-sdk-client-mock.
 */
export async function startRunsPlatform(
  fake: FakeLlmProviders,
  backend: Backend = 'sqlite',
  env: Record<string, string> = {},
  /** startTestPlatform's options (`inMemory`: the app called without a server). */
  options: { inMemory?: boolean } = {},
): Promise<TestPlatform> {
  return startTestPlatform(
    {
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
      OPENAI_API_KEY: 'sk-openai-test',
      OPENAI_BASE_URL: fake.baseUrls.openai,
      ...env,
    },
    backend,
    { notifier: fastNotifier(backend === 'sqlite' ? 'local' : 'aws'), scheduler: new LocalScheduler() },
    options,
  );
}

/** A prompt agent on the fake OpenAI that says its `text`: what the runs' webhook tests call. */
export const ECHO_AGENT = {
  name: 'echo',
  description: 'Echoes.',
  supported_providers: ['openai'],
  default_models: { openai: 'gpt-test-mini' },
  prompt_template: 'Say {{text}}',
  input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
};
