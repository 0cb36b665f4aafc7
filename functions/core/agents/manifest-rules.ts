import { isRecord } from '../../shared/is-record.ts';
import { canonicalType, deriveEngine } from './agent-kinds.ts';
import { BUILT_IN_TOOLS, SERVICE_KEY_SECRET } from './manifest-limits.ts';
import { DEPENDENCY_ID_PATTERN } from './manifest-names.ts';
import { placeholders } from './placeholders.ts';
import { LLM_PROVIDERS, LOCAL_PROVIDER, PROVIDERS } from './providers.ts';
import { schemaProperties } from './user-schema.ts';

/*
 * The manifest's rules across fields, per kind of agent: engines and run modes, providers and
 * default models, secrets, price and download, placeholders, custom tools, orchestration and its
 * dependencies' tools. manifest.ts runs them on top of the field schema (manifest-fields.ts).
 */

// ---------------------------------------------------------------------------------------------
// Rules across fields. They run even when single fields failed, so every issue is reported at
// once; hence they read the value defensively.

export interface RuleOptions {
  allowNoSecrets: boolean;
}

/**
 * Reports a rule's issue on `field`. `also`: the other fields the rule compared it with, so that a
 * PATCH that sent only one of them can be told on the field it sent (manifest.ts, toFieldIssues).
 */
export type AddIssue = (field: string, message: string, also?: string[]) => void;

export function checkRules(
  m: Record<string, unknown>,
  add: AddIssue,
  opts: RuleOptions,
  /** Whether the field schema already refused this field (or something in it). */
  failed: (field: string) => boolean = () => false,
) {
  const type = canonicalType(m.type);
  const hasRuntime = isRecord(m.runtime);
  const hasLoop = isRecord(m.loop);
  // With both runtime and loop the engine is unknown; rules that depend on it stay quiet.
  const engine = type && !(hasRuntime && hasLoop) ? deriveEngine(type, hasRuntime, hasLoop) : undefined;
  const runMode = m.run_mode;
  const tools = Array.isArray(m.custom_tools) ? m.custom_tools : [];
  const orchestration = isRecord(m.manifest) ? m.manifest : undefined;
  const dependencies =
    orchestration && Array.isArray(orchestration.dependencies) ? orchestration.dependencies : [];

  if (hasRuntime && hasLoop) add('runtime', 'runtime and loop are mutually exclusive');

  if (type === 'skill') {
    const why = 'is not allowed for skills (a skill is a prompt fragment and does not run)';
    if (hasRuntime) add('runtime', why);
    if (hasLoop) add('loop', why);
    if (runMode === 'always_on')
      add('run_mode', 'always_on is not allowed for skills (a skill does not run)');
    if (orchestration) add('manifest', why);
    if (m.callable === true)
      add('callable', 'must be false for skills (skills are attached to calls, not called)');
  } else if (runMode === 'always_on' && engine) {
    const runs = engine === 'managed_loop' || (engine === 'code_runtime' && hasRuntime);
    if (!runs) add('run_mode', 'always_on requires runtime.command or loop (not direct_llm)');
  }

  if (typeof m.execution_engine === 'string' && engine && m.execution_engine !== engine) {
    add('execution_engine', `is derived from type, runtime and loop (here ${engine}); omit it`);
  }

  if (typeof m.timeout_seconds === 'number') {
    if (runMode === 'on_demand' && m.timeout_seconds === 0) {
      add('timeout_seconds', 'must be at least 1 for on-demand agents (0 is for always-on agents)', [
        'run_mode',
      ]);
    }
    if (runMode === 'always_on' && m.timeout_seconds !== 0) {
      add('timeout_seconds', 'must be 0 for always-on agents (they have no request timeout)', ['run_mode']);
    }
  }
  if (runMode === 'always_on' && m.run_timeout_seconds !== undefined) {
    add(
      'run_timeout_seconds',
      'is not allowed for always-on agents (they are not called, so never run as runs)',
      ['run_mode'],
    );
  }

  checkProviders(m, add, type, engine);

  checkSecrets(m, add, type, opts);

  // price and download
  if (typeof m.price_credits === 'number' && m.price_credits > 0 && m.allow_local_download === true) {
    add(
      'allow_local_download',
      'must be false for paid agents (price_credits > 0): paid agents are server-only',
      ['price_credits'],
    );
  }

  // prompt_template placeholders
  if (typeof m.prompt_template === 'string' && isRecord(m.input_schema)) {
    const props = schemaProperties(m.input_schema);
    for (const p of placeholders(m.prompt_template)) {
      if (!props.has(p))
        add('prompt_template', `{{${p}}} is not a property of input_schema`, ['input_schema']);
    }
  }

  checkCustomTools(add, tools, engine, failed);

  if (orchestration) checkOrchestration(m, add, { orchestration, dependencies, tools, engine, failed });
}

type Engine = ReturnType<typeof deriveEngine> | undefined;

/** supported_providers and default_models. */
function checkProviders(m: Record<string, unknown>, add: AddIssue, type: unknown, engine: Engine) {
  const providers = Array.isArray(m.supported_providers) ? m.supported_providers : [];
  const anthropicOnly = type === 'agent' || engine === 'managed_loop';
  const seenProviders = new Set<unknown>();
  providers.forEach((p, i) => {
    const at = `supported_providers.${i}`;
    if (typeof p !== 'string') return;
    if (p === LOCAL_PROVIDER) {
      add(
        at,
        `${LOCAL_PROVIDER} is the local-model provider and cannot be listed; use anthropic, openai, google or any`,
      );
    } else if (p !== 'any' && !(LLM_PROVIDERS as readonly string[]).includes(p)) {
      add(at, 'must be anthropic, openai, google or any');
    } else if (seenProviders.has(p)) {
      add(at, `${p} is listed twice`);
    } else if (anthropicOnly && p !== 'anthropic') {
      add(at, 'agent-type (managed-loop) agents may list only anthropic');
    }
    seenProviders.add(p);
  });
  if (seenProviders.has('any') && providers.length > 1) {
    add('supported_providers', 'any must be the only value when given');
  }

  // default_models
  if (isRecord(m.default_models)) {
    const listed = providers.filter((p): p is string => typeof p === 'string');
    for (const key of Object.keys(m.default_models)) {
      if (!(PROVIDERS as readonly string[]).includes(key)) {
        add(`default_models.${key}`, `is not a provider (${PROVIDERS.join(', ')})`);
      } else if (
        key !== LOCAL_PROVIDER &&
        listed.length > 0 &&
        !listed.includes('any') &&
        !listed.includes(key)
      ) {
        add(`default_models.${key}`, `${key} is not in supported_providers`, ['supported_providers']);
      }
    }
  }
}

/** required_secrets and optional_secrets. */
function checkSecrets(m: Record<string, unknown>, add: AddIssue, type: unknown, opts: RuleOptions) {
  const required = Array.isArray(m.required_secrets) ? m.required_secrets : [];
  for (const list of ['required_secrets', 'optional_secrets'] as const) {
    const names = Array.isArray(m[list]) ? (m[list] as unknown[]) : [];
    const seen = new Set<unknown>();
    names.forEach((n, i) => {
      if (n === SERVICE_KEY_SECRET) {
        add(
          `${list}.${i}`,
          `${SERVICE_KEY_SECRET} must not be listed: it is injected automatically for agents with dependencies, and listing it breaks orchestration`,
        );
      } else if (seen.has(n)) {
        add(`${list}.${i}`, `${String(n)} is listed twice`);
      } else if (list === 'optional_secrets' && required.includes(n)) {
        add(`${list}.${i}`, `${String(n)} is already in required_secrets`, ['required_secrets']);
      }
      seen.add(n);
    });
  }
  if ((type === 'tool' || type === 'agent') && required.length === 0 && !opts.allowNoSecrets) {
    add(
      'required_secrets',
      `must be declared (non-empty) for ${type} types; if it needs none, publish with allow_no_secrets=true`,
    );
  }
}

/**
 * custom_tools: their names and placeholders (a list the field schema refused says nothing about
 * the engine's use of it).
 */
function checkCustomTools(
  add: AddIssue,
  tools: unknown[],
  engine: Engine,
  failed: (field: string) => boolean,
) {
  if (tools.length > 0 && engine && engine !== 'managed_loop' && !failed('custom_tools')) {
    add('custom_tools', 'are used only by managed-loop agents (type agent or a loop object)');
  }
  const toolNames = new Map<string, number>();
  tools.forEach((tool, i) => {
    if (!isRecord(tool)) return;
    const { name, command } = tool;
    if (typeof name === 'string') {
      if ((BUILT_IN_TOOLS as readonly string[]).includes(name)) {
        add(`custom_tools.${i}.name`, `${name} is a built-in tool name and cannot be reused`);
      } else if (toolNames.has(name)) {
        add(`custom_tools.${i}.name`, `${name} duplicates custom_tools.${toolNames.get(name)}.name`);
      } else {
        toolNames.set(name, i);
      }
    }
    if (typeof command !== 'string') return;
    const params = placeholders(command);
    if (params.length === 0) return;
    if (tool.input_schema === undefined) {
      add(
        `custom_tools.${i}.input_schema`,
        `is required when the command has placeholders (${params.map((p) => `{{${p}}}`).join(', ')})`,
      );
    } else if (isRecord(tool.input_schema)) {
      const props = schemaProperties(tool.input_schema);
      for (const p of params) {
        if (!props.has(p))
          add(`custom_tools.${i}.command`, `placeholder {{${p}}} is not a property of input_schema`);
      }
    }
  });
}

/** manifest (orchestration): dependencies, hops, visibility, and the dependencies' tools. */
function checkOrchestration(
  m: Record<string, unknown>,
  add: AddIssue,
  o: {
    orchestration: Record<string, unknown>;
    dependencies: unknown[];
    tools: unknown[];
    engine: Engine;
    failed: (field: string) => boolean;
  },
) {
  const { orchestration, dependencies, tools, engine, failed } = o;
  const seenIds = new Map<string, number>();
  dependencies.forEach((d, i) => {
    if (!isRecord(d) || typeof d.id !== 'string') return;
    const first = seenIds.get(d.id);
    if (first !== undefined)
      add(`manifest.dependencies.${i}.id`, `duplicates manifest.dependencies.${first}.id`);
    else seenIds.set(d.id, i);
  });
  const { max_hops: maxHops, min_required_hops: minHops } = orchestration;
  if (dependencies.length > 0 && typeof maxHops === 'number' && maxHops < 1) {
    add('manifest.max_hops', 'must be at least 1 when dependencies are declared');
  }
  if (typeof minHops === 'number' && typeof maxHops === 'number' && minHops > maxHops) {
    add('manifest.min_required_hops', 'must not exceed max_hops');
  }
  const visibility = orchestration.visibility;
  if (
    typeof visibility === 'string' &&
    typeof m.is_public === 'boolean' &&
    (visibility === 'public') !== m.is_public
  ) {
    add('manifest.visibility', `${visibility} contradicts is_public: ${m.is_public}`, ['is_public']);
  }
  if (dependencies.length > 0 && engine && engine !== 'managed_loop') {
    add(
      'manifest.dependencies',
      'only managed-loop agents (type agent or a loop object) may declare dependencies',
    );
  } else if (dependencies.length > 0 && engine === 'managed_loop' && !failed('custom_tools')) {
    // Tools the field schema refused cannot be matched: their own issues say what is wrong.
    checkDependencyTools(dependencies, tools, add);
  }
}

/**
 * Our reading of "matching custom_tools": every dependency needs a custom tool whose command
 * names the dependency's id (org/agent, not as part of a longer name), and a command that names
 * a version of a dependency (org/agent/vN or org/agent@vN) must name the pinned one.
 */
function checkDependencyTools(dependencies: unknown[], tools: unknown[], add: AddIssue) {
  dependencies.forEach((d, i) => {
    if (!isRecord(d) || typeof d.id !== 'string' || !DEPENDENCY_ID_PATTERN.test(d.id)) return;
    const id = escapeRegExp(d.id);
    const mention = new RegExp(`(?:^|[^A-Za-z0-9_-])${id}(?![A-Za-z0-9_-])`);
    const versioned = new RegExp(`(?:^|[^A-Za-z0-9_-])${id}[/@](v[0-9]+)(?![A-Za-z0-9_-])`, 'g');
    let matched = false;
    tools.forEach((tool, k) => {
      if (!isRecord(tool) || typeof tool.command !== 'string' || !mention.test(tool.command)) return;
      matched = true;
      if (typeof d.version !== 'string') return;
      for (const m of tool.command.matchAll(versioned)) {
        if (m[1] !== d.version) {
          add(
            `custom_tools.${k}.command`,
            `calls ${d.id} ${m[1]} but manifest.dependencies pins ${d.version}`,
            ['manifest'],
          );
        }
      }
    });
    if (!matched) {
      add(
        `manifest.dependencies.${i}`,
        `has no matching custom tool (a custom tool whose command calls ${d.id})`,
        ['custom_tools'],
      );
    }
  });
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
