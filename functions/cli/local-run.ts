/**
 * What `agenthost run` does (commands/run.ts defines the command): publishes the agent's directory
 * into an in-process platform on a temporary data dir (in-process-platform.ts) and calls it there
 * over loopback, so the manifest checks, the input validation against input_schema, the secrets
 * rule and the engine (the model gateway with the environment's provider settings; the bubblewrap
 * sandbox with the bundle packed as publish packs it) are the platform's own code, not a copy. An
 * always-on agent is deployed there as a service and served until SIGINT or SIGTERM. A skill is
 * checked and refused: skills are not called.
 */
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Manifest } from '../core/agents/manifest.ts';
import { parsePublishBody } from '../core/agents/publish.ts';
import type { LogLevel } from '../shared/logger.ts';
import {
  type AgentDir,
  type Provider,
  type PublishBody,
  packAgentBundle,
  readAgentDir,
} from './agent-dir.ts';
import { callResultJson } from './call-result-json.ts';
import type { CliContext, Client } from './cli-context.ts';
import { CliError, EXIT } from './cli-errors.ts';
import { printJson, printRecord } from './cli-output.ts';
import { startInProcessPlatform } from './in-process-platform.ts';
import { readInputOption } from './input-option.ts';
import { readSecretsFile } from './secrets-file.ts';
import { escapeControls } from './terminal-text.ts';

export interface RunFlags {
  input?: string;
  inputFile?: string;
  file?: string[];
  secretsFile?: string;
  skill?: string[];
  provider?: Provider;
  model?: string;
  timeout?: string;
}

export async function runAgentDir(
  ctx: CliContext,
  dirArg: string,
  flags: RunFlags,
): Promise<number | undefined> {
  const dir = resolve(dirArg);
  await requireDirectory(dir);
  const source = await readAgentDir(dir);
  if (source.kind === 'skill') return refuseSkill(source, dirArg);
  const run = await prepareRun(ctx, dir, source.body, flags);
  const platform = await startInProcessPlatform(ctx.io.env, {
    level: platformLogLevel(ctx),
    write: (line) => ctx.note(`platform: ${line}`),
  });
  try {
    const { client } = platform;
    const skills: string[] = [];
    for (const skill of run.skills) {
      const published = await client.agents.publish(skill);
      skills.push(`${published.org}/${published.name}@${published.version}`);
    }
    // Published as it is; only the secrets bypass is implied (a publish-time rule, not a run's).
    let agent = await client.agents.publish(run.body as PublishBody, { allow_no_secrets: 'true' });
    const packed = await packAgentBundle(dir, run.manifest);
    if (packed) agent = await client.agents.uploadBundle(agent.id, packed.data);
    const workspace = await personalWorkspace(client);
    for (const [name, value] of Object.entries(run.secrets))
      await client.secrets.put(workspace, { name, value });
    const ref = `${agent.org}/${agent.name}@${agent.version}`;
    if (run.service) return await serve(ctx, client, workspace, ref);
    try {
      const result = await client.agents.call(ref, run.input, {
        ...(flags.file?.length ? { files: flags.file } : {}),
        ...(flags.provider ? { provider: flags.provider } : {}),
        ...(flags.model ? { model: flags.model } : {}),
        ...(skills.length ? { skills } : {}),
        ...(run.timeoutMs !== undefined ? { timeoutMs: run.timeoutMs } : {}),
      });
      for (const w of result.warnings ?? []) ctx.note(`warning ${w.code}: ${w.message}`);
      printJson(ctx, ctx.json ? callResultJson(result) : result.data);
    } finally {
      await printAgentLogs(ctx, client, agent.id);
    }
    return undefined;
  } finally {
    await platform.close();
  }
}

interface PreparedRun {
  manifest: Manifest;
  /** The publish body: the manifest as written, without the default_skills a local run cannot resolve. */
  body: Record<string, unknown>;
  service: boolean;
  input: Record<string, unknown>;
  secrets: Record<string, string>;
  skills: { type: 'skill'; skill_md: string }[];
  timeoutMs: number | undefined;
}

/**
 * Everything checked before a platform starts: the manifest by the platform's own parsing (every
 * issue, on its field), what a local run cannot do (an orchestrator's dependencies, --input for a
 * service), the flags, the input, the secrets and the --skill directories.
 */
async function prepareRun(
  ctx: CliContext,
  dir: string,
  written: Record<string, unknown>,
  flags: RunFlags,
): Promise<PreparedRun> {
  const { manifest } = await parsePublishBody(written, { allowNoSecrets: true });
  const dependencies = manifest.manifest?.dependencies ?? [];
  if (dependencies.length > 0)
    throw new CliError(
      `${manifest.name} is an orchestrator: its dependencies (${dependencies.map((d) => `${d.id}@${d.version}`).join(', ')}) live on the platform, so it cannot run locally`,
      EXIT.usage,
      'publish it and call it: agenthost publish DIR, then agenthost call ORG/NAME',
    );
  const service = manifest.run_mode === 'always_on';
  if (service && (flags.input !== undefined || flags.inputFile !== undefined || flags.file?.length))
    throw new CliError(
      `${manifest.name} is an always-on service: it takes HTTP requests at its URL, not --input or --file`,
      EXIT.usage,
    );
  const timeout = flags.timeout === undefined ? undefined : Number(flags.timeout);
  if (timeout !== undefined && !(timeout > 0))
    throw new CliError('--timeout must be a positive number of seconds', EXIT.usage);
  const input = service ? {} : await callInput(ctx, dir, flags);
  const secrets = await runSecrets(ctx, manifest, flags.secretsFile);
  const skills = await Promise.all((flags.skill ?? []).map((d) => readSkillDir(resolve(d))));
  const body = { ...written };
  if (manifest.default_skills.length > 0) {
    ctx.note(
      `warning: default_skills (${manifest.default_skills.join(', ')}) live on the platform and are not attached to a local run; attach local ones with --skill DIR`,
    );
    delete body.default_skills;
  }
  return {
    manifest,
    body,
    service,
    input,
    secrets,
    skills,
    timeoutMs: timeout === undefined ? undefined : Math.round(timeout * 1000),
  };
}

async function requireDirectory(dir: string): Promise<void> {
  if (!(await stat(dir).catch(() => undefined))?.isDirectory())
    throw new CliError(`${dir} is not a directory`, EXIT.usage);
}

/** A skill is checked as publish checks it (its issues are the error), then refused: skills are not called. */
async function refuseSkill(source: Extract<AgentDir, { kind: 'skill' }>, dirArg: string): Promise<never> {
  const { manifest } = await parsePublishBody(source.body, { allowNoSecrets: false });
  throw new CliError(
    `${manifest.name} is a skill (its SKILL.md is valid): a skill is not called, it is attached to calls of other agents`,
    EXIT.usage,
    `try it with an agent: agenthost run AGENT_DIR --skill ${dirArg}; or publish it (agenthost publish ${dirArg}) and call an agent with --skills ORG/${manifest.name}`,
  );
}

async function readSkillDir(dir: string): Promise<{ type: 'skill'; skill_md: string }> {
  await requireDirectory(dir);
  const source = await readAgentDir(dir);
  if (source.kind !== 'skill') throw new CliError(`--skill ${dir} has no SKILL.md`, EXIT.usage);
  return source.body;
}

/** --input or --input-file; else DIR/input.json when it exists (what `agenthost init` writes); else {}. */
async function callInput(ctx: CliContext, dir: string, flags: RunFlags): Promise<Record<string, unknown>> {
  const given = await readInputOption(ctx, flags);
  if (given) return given;
  const sample = join(dir, 'input.json');
  if (!(await stat(sample).catch(() => undefined))?.isFile()) return {};
  ctx.note(`input from ${sample}`);
  return (await readInputOption(ctx, { inputFile: sample })) ?? {};
}

/**
 * The values of the secrets the manifest declares, from --secrets-file, then the environment. A
 * required one that is in neither is an error naming it (never a value); nothing undeclared is
 * taken, as the platform injects nothing undeclared.
 */
async function runSecrets(
  ctx: CliContext,
  manifest: Manifest,
  secretsFile: string | undefined,
): Promise<Record<string, string>> {
  const fromFile = secretsFile ? await readSecretsFile(secretsFile) : {};
  const declared = [...manifest.required_secrets, ...manifest.optional_secrets];
  for (const name of Object.keys(fromFile))
    if (!declared.includes(name))
      ctx.note(
        `warning: ${name} (in ${secretsFile}) is not a declared secret of ${manifest.name}; it is not injected`,
      );
  const values: Record<string, string> = {};
  for (const name of declared) {
    const value = fromFile[name] ?? ctx.io.env[name];
    if (value !== undefined && value !== '') values[name] = value;
  }
  const missing = manifest.required_secrets.filter((n) => values[n] === undefined);
  if (missing.length > 0)
    throw new CliError(
      `missing required secret${missing.length > 1 ? 's' : ''} ${missing.join(', ')} of ${manifest.name}`,
      EXIT.usage,
      `set ${missing.length > 1 ? 'them' : 'it'} in the environment (${missing[0]}=… agenthost run …) or in a --secrets-file of KEY=VALUE lines`,
    );
  return values;
}

/** The in-process platform's logs: its errors only, unless --debug or PLATFORM_LOG_LEVEL asks for more. */
function platformLogLevel(ctx: CliContext): LogLevel {
  if (ctx.options.debug) return 'debug';
  const level = ctx.io.env.PLATFORM_LOG_LEVEL;
  return level === 'debug' || level === 'info' || level === 'warn' || level === 'silent' ? level : 'error';
}

async function personalWorkspace(client: Client): Promise<string> {
  const { workspaces } = await client.workspaces.list();
  const personal = workspaces.find((w) => w.personal) ?? workspaces[0];
  if (!personal) throw new Error('the in-process platform has no workspace');
  return personal.id;
}

/**
 * The run's log lines (what the platform keeps for the agent's owners: outcome, the stderr tail of
 * a failed command, the loop's tool calls), oldest first, on stderr: locally the author is the owner.
 */
async function printAgentLogs(ctx: CliContext, client: Client, id: string): Promise<void> {
  const page = await client.agents.logs(id, { limit: 200 }).catch(() => undefined);
  for (const line of [...(page?.logs ?? [])].reverse())
    ctx.note(`log ${line.level.toUpperCase().padEnd(5)} ${escapeControls(line.message)}`);
}

/**
 * An always-on agent: deployed as a service of the in-process platform, its URL printed once it
 * runs, its logs followed on stderr until SIGINT or SIGTERM; then removed. A service that the
 * platform pauses (crash loop, a failed start) ends the run with exit 1 and its last error.
 */
async function serve(ctx: CliContext, client: Client, workspace: string, ref: string): Promise<number> {
  const stopped = new AbortController();
  const stop = () => stopped.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const deployed = await client.services.deploy(workspace, { agent: ref });
  let seen = 0;
  const followLogs = async () => {
    const page = await client.services.logs(workspace, deployed.id, { limit: 5000 });
    const lines = [...page.logs].reverse();
    for (const line of lines.slice(seen))
      ctx.note(`log ${line.level.toUpperCase().padEnd(5)} ${escapeControls(line.message)}`);
    seen = Math.max(seen, lines.length);
  };
  try {
    ctx.note(`starting ${ref} as a service …`);
    let service = deployed;
    while (service.state === 'provisioning' && !stopped.signal.aborted) {
      await sleep(200);
      service = await client.services.get(workspace, deployed.id);
    }
    await followLogs();
    if (stopped.signal.aborted) return EXIT.ok;
    if (service.state !== 'running')
      throw new CliError(
        `the service did not start: ${service.last_error ?? service.state}`,
        EXIT.server,
        'its log lines are above',
        'SERVICE_FAILED',
      );
    printRecord(ctx, service, [
      ['serving', ref],
      ['url', service.url],
    ]);
    ctx.note('Ctrl-C stops it.');
    while (!stopped.signal.aborted) {
      await sleep(1000, undefined, { signal: stopped.signal }).catch(() => undefined);
      await followLogs();
      service = await client.services.get(workspace, deployed.id);
      if (service.state === 'paused') {
        ctx.note(
          `the platform paused the service: ${service.last_error ?? service.paused_reason ?? 'no reason given'}`,
        );
        return EXIT.server;
      }
    }
    return EXIT.ok;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    ctx.note('stopping the service …');
    await client.services.delete(workspace, deployed.id).catch(() => undefined);
  }
}
