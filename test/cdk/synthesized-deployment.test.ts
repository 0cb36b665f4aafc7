import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fingerprint, putInPlace } from '../../functions/emulator/synthesized-deployment.ts';

/** A finished assembly in a staging folder, as synthesize leaves it before the swap. */
function stage(root: string, name: string, print: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'asset.abc'), { recursive: true });
  writeFileSync(join(dir, 'asset.abc', 'index.mjs'), `// ${name}`);
  writeFileSync(join(dir, '.agenthost-fingerprint'), print);
  return dir;
}

describe('the synthesized assembly swap (starts sharing one assembly directory)', () => {
  test('twelve starts finishing together: every swap succeeds, one assembly stays, no staging or lock is left', async () => {
    // A CI run failed here: two emulated starts both removed the old assembly and both renamed theirs in; the second rename failed with ENOTEMPTY.
    const root = mkdtempSync(join(tmpdir(), 'assembly-swap-'));
    const directory = join(root, 'assembly');
    const marker = join(directory, '.agenthost-fingerprint');
    stage(root, 'assembly', 'old-print');
    const stagings = Array.from({ length: 12 }, (_, i) => stage(root, `assembly.staging-${i}`, 'new-print'));
    const results = await Promise.allSettled(
      stagings.map((s) => putInPlace(s, directory, marker, 'new-print')),
    );
    assert.deepEqual(
      results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason)),
      [],
    );
    assert.equal(readFileSync(marker, 'utf8'), 'new-print');
    assert.deepEqual(readdirSync(root), ['assembly']);
    rmSync(root, { recursive: true, force: true });
  });

  test('a lock left by a start that died while holding it is broken once stale', async () => {
    const root = mkdtempSync(join(tmpdir(), 'assembly-swap-'));
    const directory = join(root, 'assembly');
    const lock = `${directory}.lock`;
    mkdirSync(lock);
    const longAgo = new Date(Date.now() - 120_000);
    utimesSync(lock, longAgo, longAgo);
    await putInPlace(
      stage(root, 'assembly.staging-1', 'p'),
      directory,
      join(directory, '.agenthost-fingerprint'),
      'p',
    );
    assert.deepEqual(readdirSync(root), ['assembly']);
    rmSync(root, { recursive: true, force: true });
  });
});

describe('the assembly’s fingerprint (when a shared assembly is synthesized again)', () => {
  test('changes with the dashboard’s source and the SDK it is built with, which synthesis builds, and not with its build output', () => {
    const root = mkdtempSync(join(tmpdir(), 'assembly-print-'));
    try {
      for (const dir of ['functions', 'lib', 'bin', 'web/src', 'web/dist', 'sdk/src'])
        mkdirSync(join(root, dir), { recursive: true });
      writeFileSync(join(root, 'package-lock.json'), '{}');
      writeFileSync(join(root, 'cdk.json'), '{}');
      writeFileSync(join(root, 'functions', 'handler.ts'), 'export const a = 1;');
      writeFileSync(join(root, 'web', 'src', 'page.tsx'), 'export const Page = () => null;');
      writeFileSync(join(root, 'web', 'dist', 'index.js'), '// built');
      const before = fingerprint({}, root);
      writeFileSync(join(root, 'web', 'dist', 'index.js'), '// built again, longer');
      assert.equal(fingerprint({}, root), before, 'a build output is not a source');
      writeFileSync(join(root, 'web', 'src', 'page.tsx'), 'export const Page = () => "changed";');
      const afterWeb = fingerprint({}, root);
      assert.notEqual(afterWeb, before, 'a dashboard source changed');
      writeFileSync(join(root, 'functions', 'handler.ts'), 'export const a = 22;');
      const afterFunction = fingerprint({}, root);
      assert.notEqual(afterFunction, afterWeb, 'a function source changed');
      // The dashboard is built with the SDK's client: a change of the SDK is one of the dashboard.
      writeFileSync(join(root, 'sdk', 'src', 'client.ts'), 'export const createClient = () => 2;');
      assert.notEqual(fingerprint({}, root), afterFunction, 'an SDK source changed');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
