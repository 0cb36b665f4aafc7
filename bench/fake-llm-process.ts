/**
 * A zero-delay fake LLM provider in its own process, for benchmarks: the model vendor is remote
 * in production, so its work should not share the platform's thread. Prints its Anthropic base
 * URL on the first line of stdout and serves until stdin closes.
 */
import { start as startFakeLlm } from '../test/helpers/fake-llm-providers.ts';

const fake = await startFakeLlm({ record: false });
fake.setResponder(() => ({ text: 'done' }));
process.stdout.write(`${fake.baseUrls.anthropic}\n`);
process.stdin.resume();
process.stdin.on('end', () => void fake.close().then(() => process.exit(0)));
