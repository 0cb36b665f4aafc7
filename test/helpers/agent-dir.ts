import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** An agent's directory as `agenthost publish` reads it: `<parent>/<name>/agent.json`. Returns the directory. */
export async function writeAgentDir(
  parent: string,
  manifest: { name: string } & Record<string, unknown>,
): Promise<string> {
  const dir = join(parent, manifest.name);
  await mkdir(dir);
  await writeFile(join(dir, 'agent.json'), JSON.stringify(manifest));
  return dir;
}
