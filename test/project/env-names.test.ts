import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CLIENT_ENV, ENV } from '../../functions/shared/env-names.ts';

/**
 * The platform's environment variables are named once, in functions/shared/env-names.ts: the
 * stacks (lib/), the CLI (bin/), the emulated deployment (functions/emulator/) and the adapters
 * (functions/adapters/) set and read them through ENV, so a renamed variable cannot leave one of them behind. Comments and messages for
 * people may still spell a name out; code may not (a name as a string literal, an object key or a
 * property).
 */

const NAMES = [...Object.values(ENV), ...Object.values(CLIENT_ENV)];
// HOST and PORT are common words in code (and the sandbox's own PORT for a service is not ours).
const CHECKED = NAMES.filter((name) => name !== 'HOST' && name !== 'PORT');

async function sources(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await sources(path)));
    else if (path.endsWith('.ts') && !path.endsWith('.test.ts')) files.push(path);
  }
  return files;
}

/** The code of a file without its comments (line and block comments; good enough for this check). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** Uses of a variable's name as code: a quoted string, an object key, or a property. */
function usesOf(text: string, name: string): number {
  const pattern = new RegExp(`['"\`]${name}['"\`]|(^|[\\s{,])${name}\\s*:|\\.${name}\\b`, 'gm');
  return [...code(text).matchAll(pattern)].length;
}

describe('environment variable names', () => {
  it('lib/, bin/, the emulated deployment and the adapters take every name from ENV', async () => {
    const offenders: string[] = [];
    for (const dir of ['lib', 'bin', 'functions/emulator', 'functions/adapters']) {
      for (const file of await sources(dir)) {
        const text = await readFile(file, 'utf8');
        for (const name of CHECKED) if (usesOf(text, name) > 0) offenders.push(`${file}: ${name}`);
      }
    }
    assert.deepEqual(offenders, []);
  });

  it('the check sees a name written out', () => {
    assert.equal(usesOf("fn.addEnvironment('PLATFORM_TABLE_NAME', name);", 'PLATFORM_TABLE_NAME'), 1);
    assert.equal(usesOf('const env = { PLATFORM_TABLE_NAME: name };', 'PLATFORM_TABLE_NAME'), 1);
    assert.equal(usesOf('// PLATFORM_TABLE_NAME: the table\nconst a = 1;', 'PLATFORM_TABLE_NAME'), 0);
    assert.equal(usesOf('const env = { [ENV.tableName]: name };', 'PLATFORM_TABLE_NAME'), 0);
  });
});
