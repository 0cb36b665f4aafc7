import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { cliReference, leafCommands } from '../../functions/cli/cli-reference.ts';

/** Every flag `cmd` accepts, its own and its ancestors' (the global options). */
function knownFlags(cmd: Command): Set<string> {
  const flags = new Set<string>(['--help', '-h']);
  for (let c: Command | null = cmd; c; c = c.parent)
    for (const o of c.options) for (const f of [o.long, o.short]) if (f) flags.add(f);
  return flags;
}

describe('docs/cli.md', () => {
  it('is the CLI’s own help, as `npm run cli:docs` writes it (regenerate after changing a command)', async () => {
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    const committed = await readFile(new URL('../../docs/cli.md', import.meta.url), 'utf8');
    assert.equal(committed, cliReference(pkg.version), 'docs/cli.md is stale: run npm run cli:docs');
  });

  // The reference lists every command with an example. A command added without
  // one fails here, not in a reader's hands.
  it('shows an example of running it in the help of every leaf command', () => {
    const leaves = leafCommands();
    assert.ok(leaves.length > 50, `expected the whole tree, found ${leaves.length} leaf commands`);
    const without = leaves
      .filter(({ path, help }) => {
        const block = help.split(/\nExamples?:\n/)[1];
        return !block?.includes(`agenthost ${path}`);
      })
      .map(({ path }) => path);
    assert.deepEqual(
      without,
      [],
      `leaf commands with no "Example:" block running them: ${without.join(', ')}`,
    );
  });

  it('uses only options each command has in its examples', () => {
    for (const { command, path, help } of leafCommands()) {
      const known = knownFlags(command);
      const block = help.split(/\nExamples?:\n/)[1] ?? '';
      const lines = block.split('\n').filter((l) => l.includes(`agenthost ${path}`));
      for (const line of lines) {
        // Only this command's invocation: up to a pipe or a following command.
        const own = line.slice(line.indexOf(`agenthost ${path}`)).split(/\s(?:\||&&|;)\s/)[0] as string;
        for (const flag of own.match(/(?<=\s)--?[A-Za-z][\w-]*/g) ?? [])
          assert.ok(
            known.has(flag),
            `${path}: its example uses ${flag}, which it does not take: ${line.trim()}`,
          );
      }
    }
  });
});
