import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertAllowedHost } from '../../functions/platform/allowed-hosts.ts';
import { ConfigError, parseConfig } from '../../functions/platform/config.ts';
import { ENV } from '../../functions/shared/env-names.ts';
import { PlatformError } from '../../functions/shared/errors.ts';

/**
 * Which Host and Origin headers POST /mcp answers (docs/mcp.md, "Host and Origin"): the names
 * from configuration (PLATFORM_ALLOWED_HOSTS, HOST, PLATFORM_PUBLIC_URL, CORS origins) besides
 * loopback; test/api/mcp.test.ts sends such requests over HTTP.
 */

const refused = (header: 'Host' | 'Origin') => (err: unknown) => {
  assert.ok(err instanceof PlatformError, String(err));
  assert.equal(err.code, 'FORBIDDEN');
  assert.deepEqual(err.details, { header });
  return true;
};

describe('allowed hosts and origins of POST /mcp', () => {
  it('answers loopback names and IP addresses by default, and no other name', () => {
    const config = parseConfig({});
    for (const host of ['localhost:8787', '127.0.0.1:8787', '[::1]:8787', 'app.localhost', '10.0.0.5:8787']) {
      assertAllowedHost(config, host, undefined);
    }
    for (const host of [
      'evil.example',
      'evil.example:8787',
      '127.0.0.1.evil.example',
      'localhost.evil.example',
    ]) {
      assert.throws(() => assertAllowedHost(config, host, undefined), refused('Host'), host);
    }
    assert.throws(() => assertAllowedHost(config, 'localhost', 'https://evil.example'), refused('Origin'));
  });

  it('adds the public URL’s host, the listen address’s name and the configured names', () => {
    const config = parseConfig({
      [ENV.publicUrl]: 'https://api.example.com/prod',
      [ENV.host]: 'agenthost.internal',
      [ENV.allowedHosts]: 'Mcp.Example.net, other.example.org',
    });
    for (const host of [
      'api.example.com',
      'agenthost.internal:8787',
      'mcp.example.net',
      'OTHER.example.org:443',
    ]) {
      assertAllowedHost(config, host, `https://${host}`);
    }
    assert.throws(() => assertAllowedHost(config, 'example.com', undefined), refused('Host'));
    assert.throws(
      () => assertAllowedHost(config, 'api.example.com', 'https://sub.api.example.com'),
      refused('Origin'),
    );
  });

  it('lets a page of an origin allowed to call the API (CORS) call it, and `*` allow any name', () => {
    const cors = parseConfig({ [ENV.corsOrigins]: 'https://app.example.com' });
    assertAllowedHost(cors, 'localhost:8787', 'https://app.example.com');
    assert.throws(
      () => assertAllowedHost(cors, 'localhost:8787', 'https://app.example.com:8443'),
      refused('Origin'),
    );
    const any = parseConfig({ [ENV.allowedHosts]: '*' });
    assertAllowedHost(any, 'whatever.example', 'http://whatever.example');
  });

  it('refuses a setting that is not a list of host names', () => {
    for (const value of ['https://api.example.com', 'api.example.com:443', 'api.example.com/mcp', 'a b']) {
      assert.throws(
        () => parseConfig({ [ENV.allowedHosts]: value }),
        (err: unknown) => err instanceof ConfigError && err.message.includes(ENV.allowedHosts),
        value,
      );
    }
  });
});
