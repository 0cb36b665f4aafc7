import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { writeResponse } from '../../functions/local-platform/node-request.ts';
import { UnreadAnswers } from '../../functions/local-platform/unread-answers.ts';
import { ENV } from '../../functions/shared/env-names.ts';
import { type FakeLlmProviders, start as startFakeLlm } from '../helpers/fake-llm-providers.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * Answers a client does not read (docs/http.md "Answers a client does not
 * read"), from the attacking client's side over raw loopback sockets that read an answer's first
 * bytes and then nothing: large pages left unread are bounded per address and in all, a
 * connection that reads nothing is closed after the write timeout, a streamed call's model stream
 * waits for its client, a free key cannot hold more unread streams than its concurrency (a
 * stream's slot is held until its answer is delivered), and another client is answered meanwhile.
 * Each case speaks from its own loopback addresses, so its counts are its own.
 */

const MIB = 1024 * 1024;
/** A page of tasks of about 5.9 MB: 40 descriptions of 50,000 `€` (3 bytes each). */
const TASKS = 40;
const DESCRIPTION = '€'.repeat(50_000);
const PER_ADDRESS = 8 * MIB;
const TOTAL = 12 * MIB;
/**
 * A model answer of 32 MB, far more than loopback's socket buffers take between the fake, the
 * platform and a client that reads nothing.
 */
const STREAMED_PIECES = Array.from(
  { length: 2_000 },
  (_, i) => `${String(i).padStart(4, '0')}${'x'.repeat(16_380)}`,
);

/** The fake's streamed answer: STREAMED_PIECES (its usage given, so the fake counts no words). */
const STREAMED = { chunks: STREAMED_PIECES, usage: { inputTokens: 1, outputTokens: 2_000 } };

interface Unread {
  socket: Socket;
  /** The answer's first bytes (its status line and headers), after which the client reads nothing. */
  head: Promise<string>;
  /** Reads on to the connection's end: how many bytes of the answer came in all. */
  readRest(): Promise<number>;
}

/** Sends `request` from `from` and reads the first bytes of the answer, then nothing more. */
function unread(port: number, from: string, request: string): Unread {
  const socket = connect({ host: '127.0.0.1', port, localAddress: from });
  socket.on('error', () => undefined);
  socket.write(request);
  const head = new Promise<string>((resolve) => {
    socket.once('data', (d: Buffer) => {
      socket.pause();
      resolve(d.toString('latin1'));
    });
    socket.once('close', () => resolve(''));
  });
  const readRest = async () => {
    const first = Buffer.byteLength(await head, 'latin1');
    let rest = 0;
    socket.on('data', (d: Buffer) => {
      rest += d.length;
    });
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.resume();
    await ended;
    return first + rest;
  };
  return { socket, head, readRest };
}

/** The Content-Length an answer's head declares. */
const declaredLength = (head: string) => Number(/content-length: (\d+)/i.exec(head)?.[1]);

const status = (head: string) => head.slice(9, 12);

const getTasks = (key: string) =>
  `GET /tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n\r\n`;

const streamedCall = (key: string, agent: string, body: unknown) => {
  const json = JSON.stringify(body);
  return (
    `POST /${agent}/v1/run HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
    `Content-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`
  );
};

describe('answers a client does not read', () => {
  let fake: FakeLlmProviders;
  /** Write timeout of ten minutes: what is left unread stays so for the case. */
  let held: TestPlatform;
  /** Write timeout of 300 ms. */
  let timed: TestPlatform;
  const portOf = (p: TestPlatform) => Number(new URL(p.url).port);

  const startPlatform = (writeTimeoutMs: number) =>
    startTestPlatform({
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.baseUrls.anthropic,
      [ENV.writeTimeoutMs]: String(writeTimeoutMs),
      [ENV.maxUnreadBytesPerAddress]: String(PER_ADDRESS),
      [ENV.maxUnreadBytes]: String(TOTAL),
    });

  /** An account with a page of tasks of about 5.9 MB. */
  const withLargePage = async (p: TestPlatform, org: string) => {
    const account = await p.createAccount(org);
    for (let i = 0; i < TASKS; i++) {
      const made = await p.request('POST', '/tasks', {
        key: account.key,
        body: { title: `t${i}`, description: DESCRIPTION },
      });
      assert.equal(made.status, 201, made.text);
    }
    return account;
  };

  /** A prompt agent of `key`'s org; with `schema`, its answer is that JSON object (no deltas). */
  const publish = async (p: TestPlatform, key: string, name: string, schema?: Record<string, unknown>) => {
    const published = await p.request('POST', '/agents', {
      key,
      body: {
        name,
        description: 'Answers at length.',
        supported_providers: ['anthropic'],
        prompt_template: 'Say {{text}}',
        input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        ...(schema ? { output_schema: schema } : {}),
      },
    });
    assert.equal(published.status, 201, published.text);
  };

  before(async () => {
    fake = await startFakeLlm();
    held = await startPlatform(600_000);
    timed = await startPlatform(300);
  });
  after(async () => {
    await held?.close();
    await timed?.close();
    await fake?.close();
  });

  it('bounds the large pages left unread per address and in all, and answers another client meanwhile', async () => {
    const { key } = await withLargePage(held, 'pages');
    const port = portOf(held);
    // Four from one address: one page fits its share (8 MiB), the others are refused.
    const first = Array.from({ length: 4 }, () => unread(port, '127.0.0.21', getTasks(key)));
    const firstHeads = await Promise.all(first.map((c) => c.head));
    assert.deepEqual(firstHeads.map(status).sort(), ['200', '429', '429', '429'], firstHeads.join('\n---\n'));
    for (const head of firstHeads.filter((h) => status(h) === '429')) {
      assert.match(head, /Retry-After: \d+/i);
      assert.match(head, /"quota":"unread_answers"/);
    }
    // Another address has a share of its own; a third finds the server's whole budget (12 MiB) taken.
    const second = unread(port, '127.0.0.22', getTasks(key));
    assert.equal(status(await second.head), '200');
    const third = unread(port, '127.0.0.23', getTasks(key));
    assert.equal(status(await third.head), '429');
    const bytes = held.unreadBytes();
    assert.ok(bytes > 2 * 5 * 1e6 && bytes <= TOTAL, `unread bytes: ${bytes}`);

    // Another client's requests, small answers, go through while those wait.
    const health = await fetch(`${held.url}/health`);
    assert.equal(health.status, 200);
    const small = await held.request('GET', '/tasks?limit=1', { key });
    assert.equal(small.status, 200, small.text);
    assert.ok(held.unreadBytes() > 0, 'the unread pages still wait');

    for (const c of [...first, second, third]) c.socket.destroy();
    await waitFor('the unread pages dropped', () => (held.unreadBytes() === 0 ? true : undefined));
  });

  it('delivers the large answer of a call that ran, even with the unread budget taken, instead of a 429 for work done and charged', async () => {
    const { key } = await withLargePage(held, 'fullbudget');
    await publish(held, key, 'large', { type: 'object', properties: { text: { type: 'string' } } });
    const port = portOf(held);
    // Two pages left unread from two addresses: the server's budget (12 MiB) has less than 1 MB left.
    const pages = ['127.0.0.71', '127.0.0.72'].map((from) => unread(port, from, getTasks(key)));
    for (const p of pages) assert.equal(status(await p.head), '200');
    assert.ok(held.unreadBytes() + 1_000_000 > TOTAL, `unread bytes: ${held.unreadBytes()}`);
    // A call whose answer (about 1 MB) is past what is left: it ran, so its answer is sent.
    fake.setResponder(() => ({ json: { text: 'r'.repeat(1_000_000) } }));
    try {
      const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            localAddress: '127.0.0.73',
            method: 'POST',
            path: '/fullbudget/large/v1/run',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
            );
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify({ text: 'large' }));
      });
      assert.equal(answer.status, 200, answer.text.slice(0, 300));
      assert.equal((JSON.parse(answer.text) as { data: { text: string } }).data.text.length, 1_000_000);
      // A page asked for now is a read the client can repeat: still refused.
      const third = unread(port, '127.0.0.74', getTasks(key));
      assert.equal(status(await third.head), '429');
      third.socket.destroy();
    } finally {
      fake.reset();
      for (const p of pages) p.socket.destroy();
    }
    await waitFor('the unread pages dropped', () => (held.unreadBytes() === 0 ? true : undefined));
  });

  it('closes a connection that reads nothing of its answer for the write timeout, freeing what it held', async () => {
    const { key } = await withLargePage(timed, 'stalled');
    const c = unread(portOf(timed), '127.0.0.31', getTasks(key));
    const head = await c.head;
    assert.equal(status(head), '200');
    const whole = head.indexOf('\r\n\r\n') + 4 + declaredLength(head);
    // The server let go of the page: the client never read it, so it cannot have been delivered.
    await waitFor('its page dropped', () => (timed.unreadBytes() === 0 ? true : undefined), 10_000);
    // The client that comes back finds the connection closed, the page cut.
    const got = await c.readRest();
    assert.ok(got < whole, `read ${got} of ${whole} bytes`);
  });

  it('pauses the model while a streamed call’s client reads nothing, so a free key holds no more streams than its concurrency', async () => {
    const { key } = await held.createAccount('freestreams', 'free');
    await publish(held, key, 'talker');
    fake.setResponder(() => STREAMED);
    try {
      const streams = Array.from({ length: 10 }, () =>
        unread(portOf(held), '127.0.0.41', streamedCall(key, 'freestreams/talker', { text: 'a lot' })),
      );
      for (const s of streams) assert.equal(status(await s.head), '200');
      // Each model's stream waits: the platform stopped reading it when its client stopped.
      const calls = await waitFor(
        'the ten model streams paused',
        () =>
          fake.calls.length === 10 && fake.calls.every((c) => c.pausedWrites > 0) ? fake.calls : undefined,
        15_000,
      );
      assert.equal(calls.length, 10);
      // The streams still hold the key's ten slots: an eleventh call is refused.
      const eleventh = await held.request('POST', '/freestreams/talker/v1/run', {
        key,
        body: { text: 'hi' },
      });
      assert.equal(eleventh.status, 429, eleventh.text);
      assert.equal(
        (eleventh.body as { error: { details?: { quota?: string } } }).error.details?.quota,
        'concurrency',
      );
      assert.ok(held.unreadBytes() < 10 * MIB, `unread bytes: ${held.unreadBytes()}`);

      // Hung up: the calls end, and their slots are free again.
      for (const s of streams) s.socket.destroy();
      await Promise.all(calls.map((c) => c.settled));
      fake.setResponder(() => ({ text: 'short' }));
      await waitFor('a slot free again', async () => {
        const r = await held.request('POST', '/freestreams/talker/v1/run', { key, body: { text: 'hi' } });
        return r.status === 200 ? true : undefined;
      });
    } finally {
      fake.reset();
    }
  });

  it('holds a streamed call’s slot until its answer is delivered, not only until the call ends', async () => {
    const { key } = await held.createAccount('freeresults', 'free');
    await publish(held, key, 'talker');
    const schema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
    await publish(held, key, 'bulky', schema);
    // A result event of about 5.8 MB (more than loopback's buffers take from a client reading
    // nothing), and model streams that wait for their clients.
    fake.setResponder((call) =>
      call.prompt.includes('bulky') ? { json: { text: 'r'.repeat(5_800_000) } } : STREAMED,
    );
    const port = portOf(held);
    try {
      const ended = unread(port, '127.0.0.51', streamedCall(key, 'freeresults/bulky', { text: 'bulky' }));
      assert.equal(status(await ended.head), '200');
      // The call has ended (its record is written); its result waits for its client.
      await waitFor('the call recorded', async () => {
        const page = await held.request<{ logs: { status: string }[] }>('GET', '/usage/logs', { key });
        return page.body.logs?.some((l) => l.status === 'success') ? true : undefined;
      });
      // Nine more streams, their models paused: with the ended one, the key's ten slots.
      const running = Array.from({ length: 9 }, () =>
        unread(port, '127.0.0.51', streamedCall(key, 'freeresults/talker', { text: 'paused' })),
      );
      for (const s of running) assert.equal(status(await s.head), '200');
      await waitFor('nine model streams paused', () =>
        fake.calls.filter((c) => c.prompt.includes('paused') && c.pausedWrites > 0).length === 9
          ? true
          : undefined,
      );
      const eleventh = await held.request('POST', '/freeresults/talker/v1/run', {
        key,
        body: { text: 'hi' },
      });
      assert.equal(eleventh.status, 429, eleventh.text);
      assert.equal(
        (eleventh.body as { error: { details?: { quota?: string } } }).error.details?.quota,
        'concurrency',
      );

      // Abandoned: the slots are released.
      for (const s of [ended, ...running]) s.socket.destroy();
      fake.setResponder(() => ({ text: 'short' }));
      await waitFor('a slot free again', async () => {
        const r = await held.request('POST', '/freeresults/talker/v1/run', { key, body: { text: 'hi' } });
        return r.status === 200 ? true : undefined;
      });
    } finally {
      fake.reset();
    }
  });

  it('keeps a stream whose client reads it, however long between its events (the timeout runs only while the connection is full)', async () => {
    const { key } = await timed.createAccount('patient');
    await publish(timed, key, 'slowtalker');
    const chunks = ['one ', 'two ', 'three'];
    // Events further apart than the write timeout (300 ms here), each read as it comes.
    fake.enqueue({ text: chunks.join(''), chunks, chunkDelayMs: 700 });
    const res = await fetch(`${timed.url}/patient/slowtalker/v1/run`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'text/event-stream',
      },
      body: JSON.stringify({ text: 'slowly' }),
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /event: result\n/, text);
    assert.equal(
      [...text.matchAll(/event: delta\ndata: (.*)\n/g)].map((m) => JSON.parse(m[1] ?? '{}').text).join(''),
      chunks.join(''),
    );
  });

  it('ends a streamed call whose client reads nothing for the write timeout, as a client that hung up', async () => {
    const { key } = await timed.createAccount('stalledstream');
    await publish(timed, key, 'talker');
    fake.setResponder(() => STREAMED);
    try {
      const s = unread(
        portOf(timed),
        '127.0.0.61',
        streamedCall(key, 'stalledstream/talker', { text: 'stalled' }),
      );
      assert.equal(status(await s.head), '200');
      await waitFor('the model called', () => fake.calls.find((c) => c.prompt.includes('stalled')));
      // The call ends as one whose client hung up (paused for its client, it could not have ended
      // otherwise), while the client still reads nothing.
      const line = await waitFor('the call recorded', async () => {
        const page = await timed.request<{ logs: { status: string; error_code?: string }[] }>(
          'GET',
          '/usage/logs',
          { key },
        );
        return page.body.logs?.[0];
      });
      assert.notEqual(line.status, 'success', JSON.stringify(line));
      assert.equal(timed.unreadBytes(), 0);
      // The client that comes back finds the stream cut.
      const rest = await s.readRest();
      assert.ok(rest < STREAMED_PIECES.length * 16_000, `read ${rest} bytes`);
    } finally {
      fake.reset();
    }
  });
});

describe('an answer written after its client hung up', () => {
  it('is not counted as unread: a client gone before a streamed body’s end leaves its address nothing held', async () => {
    const answers = new UnreadAnswers({
      perAddressBytes: 8 * MIB,
      totalBytes: 12 * MIB,
      writeTimeoutMs: 600_000,
    });
    let written: Promise<void> | undefined;
    const server = createServer((_req, res) => {
      // A body of one large chunk (a file read, say) whose end comes only once the client has gone.
      let pulls = 0;
      const body = new ReadableStream<Uint8Array>(
        {
          async pull(controller) {
            if (pulls++ === 0) return controller.enqueue(new Uint8Array(6 * MIB));
            if (!res.destroyed) await new Promise((resolve) => res.once('close', resolve));
            controller.close();
          },
        },
        { highWaterMark: 0 },
      );
      written = writeResponse(res, new Response(body), answers, '127.0.0.81');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const client = unread(port, '127.0.0.81', 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      await waitFor('the request handled', () => (written ? true : undefined));
      client.socket.destroy();
      await written;
      assert.equal(answers.bytesOf('127.0.0.81'), 0);
      assert.equal(answers.bytes, 0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
