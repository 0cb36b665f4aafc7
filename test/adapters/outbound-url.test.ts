import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  checkOutboundUrl,
  OutboundRequestError,
  type PlatformMode,
  type Resolver,
  refusedAddressReason,
  safeFetch,
} from '../../functions/adapters/outbound/outbound-url.ts';

/** A resolver from a fixed table; unknown names fail like NXDOMAIN. Never touches real DNS. */
function table(entries: Record<string, string[]>): Resolver {
  return async (host) => {
    const found = entries[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };
}

const resolve = table({
  'hooks.example.com': ['93.184.216.34'],
  'v6.example.com': ['2606:2800:220:1:248:1893:25c8:1946'],
  'mixed.example.com': ['93.184.216.34', '10.0.0.5'],
  'meta.example.com': ['93.184.216.34', '169.254.169.254'],
  'internal.example.com': ['192.168.1.10'],
  'localhost.example.com': ['127.0.0.1', '::1'],
  'empty.example.com': [],
});

const modes: PlatformMode[] = ['local', 'aws'];
const scheme = (mode: PlatformMode) => (mode === 'aws' ? 'https' : 'http');

async function refused(url: string, mode: PlatformMode, pattern?: RegExp) {
  const result = await checkOutboundUrl(url, { mode, resolve });
  assert.equal(result.ok, false, `${url} should be refused in ${mode} mode`);
  if (!result.ok && pattern) assert.match(result.reason, pattern);
}

async function accepted(url: string, mode: PlatformMode) {
  const result = await checkOutboundUrl(url, { mode, resolve });
  assert.ok(result.ok, `${url} should be accepted in ${mode} mode: ${result.ok ? '' : result.reason}`);
  return result;
}

describe('checkOutboundUrl', () => {
  for (const mode of modes) {
    describe(`${mode} mode`, () => {
      it('accepts public addresses, by name and as literals, with any port', async () => {
        const r = await accepted(`${scheme(mode)}://hooks.example.com:8443/alert?x=1`, mode);
        assert.deepEqual(r.addresses, ['93.184.216.34']);
        assert.equal(r.url.port, '8443');
        await accepted(`${scheme(mode)}://v6.example.com/`, mode);
        await accepted('https://93.184.216.34/hook', mode);
        await accepted('https://[2606:2800:220:1:248:1893:25c8:1946]/hook', mode);
      });

      it('refuses link-local and metadata addresses in every form', async () => {
        await refused('https://169.254.169.254/latest/meta-data/', mode, /169\.254\.169\.254 is link-local/);
        await refused('https://169.254.170.2/v2/credentials', mode, /link-local/);
        await refused('https://[fe80::1]/', mode, /link-local/);
        await refused('https://[::ffff:169.254.169.254]/', mode, /embeds 169\.254\.169\.254/);
        await refused('https://[::ffff:a9fe:a9fe]/', mode, /embeds 169\.254\.169\.254/);
        await refused('https://[64:ff9b::a9fe:a9fe]/', mode, /embeds 169\.254\.169\.254/);
        await refused('https://[2002:a9fe:a9fe::1]/', mode, /embeds 169\.254\.169\.254/);
        await refused('https://[fd00:ec2::254]/', mode, /cloud metadata/);
        await refused('https://100.100.100.200/', mode, /cloud metadata/);
        await refused('https://meta.example.com/', mode, /169\.254\.169\.254/);
      });

      it('refuses numeric IPv4 spellings that WHATWG URL normalises to metadata', async () => {
        assert.equal(new URL('http://2852039166/').hostname, '169.254.169.254');
        await refused('https://2852039166/', mode, /link-local/);
        await refused('https://0xa9fea9fe/', mode, /link-local/);
        await refused('https://0251.0376.0251.0376/', mode, /link-local/);
        await refused('https://169.254.43518/', mode, /link-local/);
      });

      it('refuses unspecified, multicast, broadcast and reserved addresses', async () => {
        await refused('https://0.0.0.0/', mode, /unspecified/);
        await refused('https://0/', mode, /unspecified/);
        await refused('https://[::]/', mode, /unspecified/);
        await refused('https://224.0.0.1/', mode, /multicast/);
        await refused('https://[ff02::1]/', mode, /multicast/);
        await refused('https://255.255.255.255/', mode, /broadcast/);
        await refused('https://240.0.0.1/', mode, /reserved/);
      });

      it('refuses credentials, other schemes, garbage and unresolvable names', async () => {
        await refused('https://user:secret@hooks.example.com/', mode, /credentials/);
        await refused('https://user@hooks.example.com/', mode, /credentials/);
        await refused('ftp://hooks.example.com/', mode, /scheme ftp/);
        await refused('file:///etc/passwd', mode, /scheme file/);
        await refused('not a url', mode, /not a valid URL/);
        await refused('https://nowhere.example.com/', mode, /could not be resolved/);
        await refused('https://empty.example.com/', mode, /no addresses/);
      });
    });
  }

  it('allows http only in local mode', async () => {
    await accepted('http://hooks.example.com/', 'local');
    await refused('http://hooks.example.com/', 'aws', /scheme http is not allowed/);
  });

  it('allows loopback and private ranges in local mode only', async () => {
    const local = [
      'http://127.0.0.1:8080/',
      'http://127.1/',
      'http://[::1]/',
      'http://10.1.2.3/',
      'http://172.16.0.1/',
      'http://192.168.1.1/',
      'http://[fd12:3456::1]/',
      'http://100.64.0.1/',
      'http://198.18.0.1/',
      'http://[::ffff:127.0.0.1]/',
      'http://internal.example.com/',
      'http://localhost.example.com/',
      'http://mixed.example.com/',
    ];
    for (const url of local) {
      await accepted(url, 'local');
      await refused(url.replace(/^http:/, 'https:'), 'aws');
    }
    await refused('https://127.0.0.1/', 'aws', /loopback/);
    await refused('https://[::1]/', 'aws', /loopback/);
    await refused('https://10.1.2.3/', 'aws', /private/);
    await refused('https://[fc00::1]/', 'aws', /private/);
    await refused('https://100.64.0.1/', 'aws', /CGNAT/);
    await refused('https://198.18.0.1/', 'aws', /benchmarking/);
    await refused('https://192.0.2.1/', 'aws', /documentation/);
    await refused('https://[2001:db8::1]/', 'aws', /documentation|reserved/);
  });

  it('allows the emulated deployment’s loopback receivers in aws mode, on their ports alone', async () => {
    const receivers = { mode: 'aws' as const, loopbackPorts: [8911], resolve };
    for (const url of ['http://127.0.0.1:8911/hook', 'https://127.0.0.1:8911/', 'http://[::1]:8911/']) {
      assert.equal((await checkOutboundUrl(url, receivers)).ok, true, url);
    }
    // Any other port, any address that is not loopback on the port, and the metadata address: refused.
    for (const [url, why] of [
      ['http://127.0.0.1:8912/', /scheme http/],
      ['https://127.0.0.1:8912/', /loopback/],
      ['https://127.0.0.1/', /loopback/],
      ['http://10.1.2.3:8911/', /not loopback/],
      ['http://169.254.169.254:8911/', /link-local|metadata/],
      ['http://mixed.example.com:8911/', /not loopback/],
      ['http://hooks.example.com:8911/', /not loopback/],
    ] as const) {
      const r = await checkOutboundUrl(url, receivers);
      assert.equal(r.ok, false, url);
      assert.match(r.ok ? '' : r.reason, why, url);
    }
  });

  it('refuses a name with one public and one private address in aws mode', async () => {
    await refused('https://mixed.example.com/', 'aws', /10\.0\.0\.5 is private/);
  });

  it('refuses a resolver answer that is not an address', async () => {
    const r = await checkOutboundUrl('https://x.example.com/', {
      mode: 'local',
      resolve: async () => ['nope'],
    });
    assert.equal(r.ok, false);
  });

  it('classifies single addresses', () => {
    assert.equal(refusedAddressReason('93.184.216.34', 'aws'), null);
    assert.equal(refusedAddressReason('127.0.0.1', 'local'), null);
    assert.match(refusedAddressReason('127.0.0.1', 'aws') ?? '', /loopback/);
    assert.match(refusedAddressReason('fe80::1%eth0', 'local') ?? '', /link-local/);
    assert.match(refusedAddressReason('::ffff:169.254.169.254', 'local') ?? '', /link-local/);
    assert.equal(refusedAddressReason('::1', 'local'), null);
  });
});

describe('safeFetch', () => {
  let server: Server;
  let port = 0;
  const seen: { method?: string; url?: string; host?: string; body: string; type?: string }[] = [];
  const hanging = new Set<ServerResponse>();

  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        seen.push({
          method: req.method,
          url: req.url,
          host: req.headers.host,
          body,
          type: req.headers['content-type'],
        });
        if (req.url === '/redirect') {
          res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
        } else if (req.url === '/hang') {
          hanging.add(res);
        } else if (req.url === '/big') {
          res.writeHead(200).end(Buffer.alloc(200_000, 'a'));
        } else {
          res.writeHead(202, { 'content-type': 'text/plain' }).end('accepted');
        }
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  });

  it('posts JSON to a loopback server in local mode and returns the status', async () => {
    const payload = JSON.stringify({ alert: 'quota', level: 'warn' });
    const res = await safeFetch(
      `http://127.0.0.1:${port}/hook`,
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload },
      { mode: 'local', resolve },
    );
    assert.equal(res.status, 202);
    assert.equal(res.body.toString(), 'accepted');
    assert.equal(res.truncated, false);
    const last = seen.at(-1)!;
    assert.equal(last.method, 'POST');
    assert.equal(last.url, '/hook');
    assert.equal(last.type, 'application/json');
    assert.deepEqual(JSON.parse(last.body), { alert: 'quota', level: 'warn' });
  });

  it('refuses before connecting when the URL is refused', async () => {
    const before = seen.length;
    await assert.rejects(
      safeFetch(`https://127.0.0.1:${port}/hook`, { method: 'POST', body: '{}' }, { mode: 'aws', resolve }),
      (err: unknown) =>
        err instanceof OutboundRequestError && err.kind === 'refused' && /loopback/.test(err.message),
    );
    await assert.rejects(
      safeFetch('http://169.254.169.254/latest/meta-data/', {}, { mode: 'local', resolve }),
      (err: unknown) => err instanceof OutboundRequestError && err.kind === 'refused',
    );
    assert.equal(seen.length, before);
  });

  it('does not follow a redirect', async () => {
    await assert.rejects(
      safeFetch(
        `http://127.0.0.1:${port}/redirect`,
        { method: 'POST', body: '{}' },
        { mode: 'local', resolve },
      ),
      (err: unknown) =>
        err instanceof OutboundRequestError && err.kind === 'redirect' && /302/.test(err.message),
    );
  });

  it('times out on a server that never answers', async () => {
    const started = Date.now();
    await assert.rejects(
      safeFetch(`http://127.0.0.1:${port}/hang`, {}, { mode: 'local', resolve, timeoutMs: 150 }),
      (err: unknown) => err instanceof OutboundRequestError && err.kind === 'timeout',
    );
    assert.ok(Date.now() - started < 3000);
  });

  it('caps the response body it reads', async () => {
    const res = await safeFetch(
      `http://127.0.0.1:${port}/big`,
      {},
      { mode: 'local', resolve, maxResponseBytes: 1024 },
    );
    assert.equal(res.status, 200);
    assert.equal(res.body.length, 1024);
    assert.equal(res.truncated, true);
  });

  it('connects to the checked address, not to a fresh DNS answer (rebinding)', async () => {
    // The name is unresolvable for real DNS (.invalid); only the injected resolver knows it, and
    // it answers differently the second time, as a rebinding server would. The request must
    // reach the loopback server through the address pinned at check time, with one resolution.
    let calls = 0;
    const rebinding: Resolver = async (host) => {
      assert.equal(host, 'rebind.agenthost.invalid');
      calls += 1;
      return calls === 1 ? ['127.0.0.1'] : ['169.254.169.254'];
    };
    const res = await safeFetch(
      `http://rebind.agenthost.invalid:${port}/pinned`,
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"ok":true}' },
      { mode: 'local', resolve: rebinding },
    );
    assert.equal(res.status, 202);
    assert.equal(calls, 1);
    const last = seen.at(-1)!;
    assert.equal(last.url, '/pinned');
    assert.equal(last.host, `rebind.agenthost.invalid:${port}`);
  });

  it('is aborted by the caller signal', async () => {
    const controller = new AbortController();
    const pending = safeFetch(
      `http://127.0.0.1:${port}/hang`,
      { signal: controller.signal },
      { mode: 'local', resolve, timeoutMs: 5000 },
    );
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(
      pending,
      (err: unknown) => err instanceof OutboundRequestError && err.kind === 'aborted',
    );
  });
});
