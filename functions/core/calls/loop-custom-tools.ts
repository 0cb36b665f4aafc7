/**
 * The manifest's custom tools in a managed loop: arguments validated against the tool's
 * input_schema, then shell-quoted into its command; a tool whose command names one of the
 * orchestrator's dependencies is that dependency's call, made by the platform.
 */
import type { LlmTool } from '../../ports/llm-gateway.ts';
import { redactSecrets } from '../../shared/redact-secrets.ts';
import type { CustomTool } from '../agents/manifest.ts';
import { fillCommand } from '../agents/placeholders.ts';
import { userSchemaValidator } from '../agents/user-schema-validator.ts';
import { execForModel, type LoopState, log, logLine, record, shorten } from './loop-state.ts';
import { subCallError } from './loop-steps.ts';

export function customTool(state: LoopState, t: CustomTool): LlmTool {
  const schema = t.input_schema as Record<string, unknown> | undefined;
  return {
    name: t.name,
    description: t.description,
    inputSchema: schema ?? { type: 'object', properties: {} },
    execute: async (args) => {
      if (schema) {
        const validate = await userSchemaValidator(schema);
        if (!validate(args)) {
          const why = (validate.errors ?? [])
            .map((e) => {
              const missing =
                e.keyword === 'required'
                  ? `/${(e.params as { missingProperty: string }).missingProperty}`
                  : '';
              return `${e.instancePath}${missing || ''} ${e.message ?? 'is invalid'}`.trim();
            })
            .slice(0, 5)
            .join('; ');
          // Which arguments were wrong, and how, is the call's (the model wrote them).
          logLine(state, 'error', `${t.name} → invalid arguments (${why})`, `${t.name} → invalid arguments`);
          throw new Error(`Invalid arguments for ${t.name}: ${why}`);
        }
      }
      // A dependency's matching custom tool is the call of that dependency, made by the platform
      // with the run's service key: no network or key is needed inside the sandbox for it.
      const dependency = matchingDependency(t.command, state.dependencies);
      if (dependency && state.callDependency) {
        log(state, 'info', t.name, undefined, `calls ${dependency.id}@${dependency.version}`);
        const answer = redactSecrets(
          await state.callDependency(dependency, record(args), state.signal),
          state.secrets,
        );
        const failed = subCallError(answer);
        if (failed)
          log(
            state,
            'error',
            t.name,
            undefined,
            `${dependency.id}@${dependency.version} failed with ${failed}`,
          );
        return answer;
      }
      const command = fillCommand(t.command, record(args));
      return execForModel(state, command, t.name, shorten(JSON.stringify(args ?? {}), 200));
    },
  };
}

/** The dependency a custom tool's command names as a whole `org/agent` word (the manifest's matching rule). */
export function matchingDependency(
  command: string,
  dependencies: { id: string; version: string }[],
): { id: string; version: string } | undefined {
  return dependencies.find((d) => {
    const escaped = d.id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return new RegExp(`(^|[^a-z0-9-])${escaped}($|[^a-z0-9-])`).test(command);
  });
}
