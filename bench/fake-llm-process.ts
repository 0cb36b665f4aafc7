/**
 * A zero-delay fake LLM provider in its own process, for benchmarks: the model vendor is remote
 * in production, so its work should not share the platform's thread. Prints the base URL of the
 * provider named by its first argument (anthropic, openai, google or ollama; anthropic when none)
 * on the first line of stdout and serves until stdin closes. With FAKE_CHUNK_DELAY_MS a streamed
 * request's answer comes in two pieces, each after that pause (bench/stream-first-byte.ts).
 */
import { type FakeProvider, start as startFakeLlm } from '../test/helpers/fake-llm-providers.ts';

const provider = (process.argv[2] ?? 'anthropic') as FakeProvider;
// Idle connections stay open past any pause of a bench (the gateways left idle while others are
// measured: a pooled connection the fake closed as a gateway reused it answered 502).
const fake = await startFakeLlm({ record: false, keepAliveTimeoutMs: 600_000 });
const pause = Number(process.env.FAKE_CHUNK_DELAY_MS ?? 0);
fake.setResponder(() =>
  pause > 0 ? { text: 'first second', chunks: ['first ', 'second'], chunkDelayMs: pause } : { text: 'done' },
);
process.stdout.write(`${fake.baseUrls[provider]}\n`);
process.stdin.resume();
process.stdin.on('end', () => void fake.close().then(() => process.exit(0)));
