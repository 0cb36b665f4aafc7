/**
 * `npm run sdk:pack [-- DIR]`: the SDK as npm ships it. Compiles sdk/ to JavaScript and
 * declarations (sdk/tsconfig.build.json: Node will not strip types from files under
 * node_modules, so a package must ship JavaScript) and packs the tarball into DIR (default: the
 * current directory). Prints the tarball's path. test/sdk/sdk-package.test.ts installs and uses it.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = fileURLToPath(new URL('..', import.meta.url));
const root = resolve(sdk, '..');
const destination = resolve(process.argv[2] ?? '.');
rmSync(resolve(sdk, 'dist'), { recursive: true, force: true });
execFileSync(resolve(root, 'node_modules/typescript/bin/tsc'), ['-p', resolve(sdk, 'tsconfig.build.json')], {
  stdio: 'inherit',
});
const out = execFileSync('npm', ['pack', sdk, '--pack-destination', destination, '--json'], {
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
});
const [packed] = JSON.parse(out) as { filename: string }[];
rmSync(resolve(sdk, 'dist'), { recursive: true, force: true });
process.stdout.write(`${resolve(destination, packed?.filename ?? '')}\n`);
