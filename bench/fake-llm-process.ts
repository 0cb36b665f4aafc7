/**
 * A zero-delay fake LLM provider in its own process, for benchmarks: the model vendor is remote
 * in production, so its work should not share the platform's thread. Prints the base URL of the
 * provider named by its first argument (anthropic, openai, google or ollama; anthropic when none)
 * on the first line of stdout and serves until stdin closes.
 */
import { type FakeProvider, start as startFakeLlm } from '../test/helpers/fake-llm-providers.ts';

const provider = (process.argv[2] ?? 'anthropic') as FakeProvider;
const fake = await startFakeLlm({ record: false });
fake.setResponder(() => ({ text: 'done' }));
process.stdout.write(`${fake.baseUrls[provider]}\n`);
process.stdin.resume();
process.stdin.on('end', () => void fake.close().then(() => process.exit(0)));
