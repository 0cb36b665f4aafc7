/**
 * A long log line keeps its start and its end with a marker, alike locally and on AWS (docs/logs.md).
 * The cutter (functions/shared/log-line-cutter.ts) is what both the local service host's log pump
 * and the ECS app launcher run; here on its own and through the local log pump.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LogPump } from '../../functions/adapters/local/service-log-pump.ts';
import {
  cutMarker,
  LOG_LINE_KEEP_BYTES,
  LogLineCutter,
  MAX_LOG_LINE_BYTES,
} from '../../functions/shared/log-line-cutter.ts';
import { redactSecrets } from '../../functions/shared/redact-secrets.ts';

/** Feeds `text` to a cutter in chunks of `size` bytes; the lines, and what the end leaves. */
function cut(text: string, size = 4096, secrets: Record<string, string> = {}): string[] {
  const cutter = new LogLineCutter(secrets);
  const bytes = Buffer.from(text);
  const lines: string[] = [];
  for (let i = 0; i < bytes.length; i += size) lines.push(...cutter.push(bytes.subarray(i, i + size)));
  const rest = cutter.end();
  return rest === undefined ? lines : [...lines, rest];
}

describe('log lines over the line limit', () => {
  it('keeps ordinary lines whole, across chunk boundaries', () => {
    assert.deepEqual(cut('one\ntwo\nthree', 2), ['one', 'two', 'three']);
    assert.deepEqual(cut('\n\nlast\n', 3), ['', '', 'last']);
  });

  it('keeps a line of exactly the limit whole, and cuts one byte more', () => {
    const exact = 'x'.repeat(MAX_LOG_LINE_BYTES);
    assert.deepEqual(cut(`${exact}\n`), [exact]);
    const over = `${'a'.repeat(LOG_LINE_KEEP_BYTES)}M${'z'.repeat(MAX_LOG_LINE_BYTES - LOG_LINE_KEEP_BYTES)}`;
    assert.deepEqual(cut(`${over}\nnext\n`), [
      `${'a'.repeat(LOG_LINE_KEEP_BYTES)}${cutMarker(1)}${'z'.repeat(LOG_LINE_KEEP_BYTES)}`,
      'next',
    ]);
  });

  it('keeps a 300 KB line’s start and end, says how much was cut, and never splits a character', () => {
    const line = `START${'€'.repeat(100_000)}END`; // 300,008 bytes
    const [kept, ...rest] = cut(`${line}\n`, 65_536);
    assert.deepEqual(rest, []);
    assert.ok(kept?.startsWith('START€€'), kept?.slice(0, 20));
    assert.ok(kept?.endsWith('€€END'));
    assert.ok(!kept?.includes('\uFFFD'), 'no character was split');
    const m = / …\[(\d+) bytes cut from this line\]… /.exec(kept ?? '');
    assert.ok(m, 'the marker is there');
    const [head, tail] = (kept as string).split(m[0]);
    assert.equal(
      Buffer.byteLength(head as string) + Number(m[1]) + Buffer.byteLength(tail as string),
      Buffer.byteLength(line),
      'the kept bytes and the cut ones add up to the line',
    );
    assert.ok(Buffer.byteLength(head as string) <= LOG_LINE_KEEP_BYTES);
    assert.ok(Buffer.byteLength(tail as string) <= LOG_LINE_KEEP_BYTES);
  });

  it('holds a line that never ends at the kept size, not at what was printed', () => {
    const cutter = new LogLineCutter();
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    for (let i = 0; i < 20; i++) assert.deepEqual(cutter.push(chunk), []);
    const rest = cutter.end() as string;
    assert.ok(rest.includes(cutMarker(20 * 1024 * 1024 - 2 * LOG_LINE_KEEP_BYTES)), rest.slice(8180, 8260));
    assert.equal(cutter.end(), undefined);
  });

  it('masks a secret value that the cut splits in two, at either end', () => {
    const secret = 'sk-live-0123456789abcdefghij';
    const line = `${'a'.repeat(LOG_LINE_KEEP_BYTES - 10)}${secret}${'b'.repeat(40_000)}${secret}${'c'.repeat(LOG_LINE_KEEP_BYTES - 12)}`;
    const [kept] = cut(`${line}\n`, 4096, { TOKEN: secret });
    const shown = redactSecrets(kept as string, { TOKEN: secret });
    assert.ok(!shown.includes(secret.slice(0, 10)), 'the secret’s start is not shown');
    assert.ok(!shown.includes(secret.slice(-12)), 'the secret’s end is not shown');
    assert.ok(
      shown.startsWith(`${'a'.repeat(LOG_LINE_KEEP_BYTES - 10)}[REDACTED] …[`),
      shown.slice(8170, 8220),
    );
    assert.ok(shown.endsWith(`… [REDACTED]${'c'.repeat(LOG_LINE_KEEP_BYTES - 12)}`));
  });

  it('is what the local service host stores: one marked line, not a slice of the middle', async () => {
    const batches: { message: string }[][] = [];
    const pump = new LogPump('svc', {}, {
      onLog: async (_id: string, lines: { message: string }[]) => {
        batches.push(lines);
      },
    } as unknown as ConstructorParameters<typeof LogPump>[2]);
    const line = `BEGIN${'x'.repeat(300 * 1024)}FINISH`;
    const bytes = Buffer.from(`${line}\nafter\n`);
    for (let i = 0; i < bytes.length; i += 65_536) pump.push('stderr', bytes.subarray(i, i + 65_536));
    await pump.close();
    const messages = batches.flat().map((l) => l.message);
    assert.equal(messages.length, 2, messages.map((m) => m.slice(0, 40)).join(' | '));
    assert.ok(messages[0]?.startsWith('BEGINxxx'));
    assert.ok(messages[0]?.endsWith('xxxFINISH'));
    assert.ok(messages[0]?.includes(' bytes cut from this line]… '));
    assert.equal(messages[1], 'after');
  });
});
