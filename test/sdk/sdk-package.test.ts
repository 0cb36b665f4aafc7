import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as tar from 'tar';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/**
 * The SDK as npm ships it (test what ships): `npm run sdk:pack` builds the tarball; it is installed
 * into an application's node_modules, where Node runs JavaScript only (no type stripping), then
 * imported by plain JavaScript against the local platform, typechecked from TypeScript, and its
 * command run.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('the packed SDK (@agenthost/sdk), installed in an application', () => {
  let work: string;
  let app: string;
  let p: TestPlatform;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'agenthost-sdk-package-'));
    const printed = execFileSync(process.execPath, [join(ROOT, 'sdk/scripts/pack.ts'), work], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH}` },
    });
    const tarball = printed.trim().split('\n').at(-1) as string;
    app = join(work, 'app');
    const installed = join(app, 'node_modules/@agenthost/sdk');
    await mkdir(installed, { recursive: true });
    await tar.x({ file: tarball, cwd: installed, strip: 1 });
    // Its dependencies, as npm would install them beside it (resolved from the repository's copy).
    const sdkPackage = JSON.parse(await readFile(join(ROOT, 'sdk/package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    for (const dep of Object.keys(sdkPackage.dependencies))
      await symlink(join(ROOT, 'node_modules', dep), join(app, 'node_modules', dep), 'dir');
    await writeFile(
      join(app, 'package.json'),
      JSON.stringify({ name: 'app', type: 'module', private: true }),
    );
    p = await startTestPlatform();
  });
  after(async () => {
    await p?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('ships JavaScript and declarations only', async () => {
    const files = await readdir(join(app, 'node_modules/@agenthost/sdk/dist/src'));
    assert.ok(files.includes('index.js') && files.includes('index.d.ts'), files.join());
    assert.ok(!files.some((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')), 'no TypeScript source');
  });

  it('is imported by plain JavaScript and calls the platform', async () => {
    await writeFile(
      join(app, 'main.js'),
      `import { createClient, AgentHostError } from '@agenthost/sdk';
const client = createClient({ baseUrl: process.env.URL, apiKey: process.env.KEY });
const health = await client.platform.health();
const { workspaces } = await client.workspaces.list();
let denied = null;
try { await createClient({ baseUrl: process.env.URL, apiKey: 'ahk_wrong' }).workspaces.list(); } catch (e) { denied = e instanceof AgentHostError ? e.code : String(e); }
console.log(JSON.stringify({ health: health.status, workspaces: workspaces.length, denied }));
`,
    );
    // Asynchronously: the platform answers from this process's event loop.
    const { stdout: out } = await promisify(execFile)(process.execPath, ['main.js'], {
      cwd: app,
      encoding: 'utf8',
      env: { ...process.env, URL: p.url, KEY: p.ownerKey },
    });
    assert.deepEqual(JSON.parse(out), { health: 'ok', workspaces: 1, denied: 'UNAUTHORIZED' });
  });

  it('types an application’s TypeScript: a right call compiles, a wrong one does not', async () => {
    await writeFile(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2023',
          strict: true,
          noEmit: true,
          // As `tsc --init` writes it. Without it, the declarations' flattened response types
          // (optional fields beside a JsonValue index signature) are TS2411 (sdk/README.md).
          skipLibCheck: true,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
        },
        files: ['right.ts'],
      }),
    );
    await writeFile(
      join(app, 'right.ts'),
      `import { createClient } from '@agenthost/sdk';
const client = createClient({ baseUrl: 'http://127.0.0.1:1' });
export const task = client.tasks.create({ title: 'typed', priority: 'high' });
`,
    );
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    execFileSync(tsc, ['-p', 'tsconfig.json'], { cwd: app, encoding: 'utf8' });
    await writeFile(
      join(app, 'right.ts'),
      `import { createClient } from '@agenthost/sdk';
const client = createClient({ baseUrl: 'http://127.0.0.1:1' });
export const task = client.tasks.create({ title: 'typed', priority: 'whenever' });
`,
    );
    assert.throws(
      () => execFileSync(tsc, ['-p', 'tsconfig.json'], { cwd: app, encoding: 'utf8', stdio: 'pipe' }),
      (err: { stdout?: string }) => /right\.ts.*error TS2322.*whenever/s.test(String(err.stdout)),
    );
  });

  it('runs its command from node_modules/.bin as installed', () => {
    const out = execFileSync(
      process.execPath,
      [join(app, 'node_modules/@agenthost/sdk/dist/bin/agenthost-sdk.js'), '--help'],
      {
        cwd: app,
        encoding: 'utf8',
      },
    );
    assert.match(out, /agenthost-sdk types REF/);
  });
});
