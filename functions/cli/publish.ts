import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ClientConfig } from '../platform/config.ts';
import { packDirectory } from './pack.ts';

export class CliError extends Error {
  override name = 'CliError';
}

interface ApiError {
  error?: { code?: string; message?: string; details?: { fields?: { field: string; message: string }[] } };
}

/** Calls the platform's API; a non-2xx answer becomes a CliError carrying the server's own message. */
async function api<T>(
  config: ClientConfig,
  method: string,
  path: string,
  body: { json?: unknown; bytes?: Buffer; contentType?: string } = {},
): Promise<T> {
  if (!config.apiKey)
    throw new CliError('Set AGENTHOST_API_KEY to an API key (ahk_…) of the account to publish as');
  let res: Response;
  try {
    res = await fetch(`${config.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${config.apiKey}`,
        ...(body.json !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(body.bytes ? { 'content-type': body.contentType ?? 'application/octet-stream' } : {}),
      },
      body: body.json !== undefined ? JSON.stringify(body.json) : body.bytes,
    });
  } catch (err) {
    throw new CliError(`Cannot reach agenthost at ${config.url} (AGENTHOST_URL): ${(err as Error).message}`);
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    throw new CliError(`${method} ${path} answered ${res.status} with a body that is not JSON`);
  }
  if (!res.ok) {
    const e = (parsed as ApiError).error;
    const fields = (e?.details?.fields ?? []).map((f) => `\n  ${f.field}: ${f.message}`).join('');
    throw new CliError(`${e?.code ?? res.status}: ${e?.message ?? `${method} ${path} failed`}${fields}`);
  }
  return parsed as T;
}

interface PublishedAgent {
  id: string;
  org: string;
  name: string;
  version: string;
  execution_engine: string;
  bundle: unknown;
  warnings?: { code: string; field?: string; message: string }[];
}

/**
 * `agenthost publish [DIR]`: publishes DIR/agent.json (or DIR/SKILL.md), then, for code-runtime
 * agents and managed-loop agents with files of their own, packs DIR (bundle.exclude and
 * bundle.include applied, include winning) and uploads it. Prints org/name/version.
 */
export async function publishCommand(
  args: string[],
  config: ClientConfig,
  out: (line: string) => void,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      workspace: { type: 'string' },
      'allow-no-secrets': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  if (positionals.length > 1) throw new CliError('publish takes one directory');
  const dir = resolve(positionals[0] ?? '.');
  if (!(await stat(dir).catch(() => undefined))?.isDirectory())
    throw new CliError(`${dir} is not a directory`);
  const manifestText = await readFile(join(dir, 'agent.json'), 'utf8').catch(() => undefined);
  const skillText =
    manifestText === undefined
      ? await readFile(join(dir, 'SKILL.md'), 'utf8').catch(() => undefined)
      : undefined;
  let body: unknown;
  if (manifestText !== undefined) {
    try {
      body = JSON.parse(manifestText);
    } catch (err) {
      throw new CliError(`${join(dir, 'agent.json')} is not valid JSON: ${(err as Error).message}`);
    }
  } else if (skillText !== undefined) {
    body = { type: 'skill', skill_md: skillText };
  } else {
    throw new CliError(`${dir} has neither agent.json nor SKILL.md`);
  }
  const query = new URLSearchParams();
  if (values.workspace) query.set('workspace_id', values.workspace);
  if (values['allow-no-secrets']) query.set('allow_no_secrets', 'true');
  const qs = query.size > 0 ? `?${query}` : '';
  let agent = await api<PublishedAgent>(config, 'POST', `/agents${qs}`, { json: body });
  const ref = `${agent.org}/${agent.name}/${agent.version}`;
  for (const w of agent.warnings ?? [])
    out(`warning ${w.code}${w.field ? ` (${w.field})` : ''}: ${w.message}`);

  const manifest = body as { bundle?: { exclude?: string[]; include?: string[] } };
  if (agent.execution_engine === 'code_runtime' || agent.execution_engine === 'managed_loop') {
    const packed = await packDirectory(dir, {
      exclude: ['agent.json', ...(manifest.bundle?.exclude ?? [])],
      include: manifest.bundle?.include ?? [],
    }).catch((err: Error) => {
      // A managed-loop agent may consist of its manifest alone; a code-runtime agent may not.
      if (agent.execution_engine === 'managed_loop' && /Nothing to pack/.test(err.message)) return undefined;
      throw new CliError(`Published ${ref}, but packing ${dir} failed: ${err.message}`);
    });
    if (packed) {
      agent = await api<PublishedAgent>(config, 'POST', `/agents/${agent.id}/upload`, {
        bytes: packed.data,
        contentType: 'application/gzip',
      }).catch((err: Error) => {
        throw new CliError(`Published ${ref}, but the bundle upload failed: ${err.message}`);
      });
      if (!values.json) out(`uploaded bundle: ${packed.files.length} files, ${packed.data.length} bytes`);
    }
  }
  out(values.json ? JSON.stringify(agent) : ref);
  return 0;
}
