import { BackgroundNotifier } from '../../functions/adapters/local/background-notifier.ts';
import type { FakeLlmProviders } from './fake-llm-providers.ts';
import { startTestPlatform, type TestPlatform } from './platform.ts';

/** A notifier with millisecond backoffs, so retry tests do not wait seconds. */
export const fastNotifier = () =>
  new BackgroundNotifier({ mode: 'local', backoffMs: [10, 20], timeoutMs: 2000 }, () => undefined);

/** The test platform wired to the fake LLM providers, with the fast notifier. */
export async function startRunsPlatform(fake: FakeLlmProviders): Promise<TestPlatform> {
  return startTestPlatform(
    {
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
      OPENAI_API_KEY: 'sk-openai-test',
      OPENAI_BASE_URL: fake.baseUrls.openai,
    },
    'sqlite',
    { notifier: fastNotifier() },
  );
}
