import { randomUUID } from 'node:crypto';
import type { TemplateResolver } from './cloudformation-template.ts';

/**
 * EventBridge rules with an event pattern (AWS::Events::Rule with EventPattern) on the default
 * bus: an event put here goes, as an asynchronous invoke, to the Lambda targets of every enabled
 * rule whose pattern matches it. Matching follows EventBridge for the pattern forms the templates
 * use: a field's array of allowed values (any one equal; an event array matches when one element
 * does), nested objects for nested fields, and `{prefix: …}` and `{exists: …}` entries. Input
 * transformers are not emulated (a target's constant `Input` is).
 */

export interface BusEvent {
  source: string;
  'detail-type': string;
  detail: Record<string, unknown>;
  resources?: string[];
}

type Pattern = Record<string, unknown>;

function matchesValue(allowed: unknown[], value: unknown, present: boolean): boolean {
  const values = Array.isArray(value) ? value : [value];
  return allowed.some((a) => {
    if (a !== null && typeof a === 'object') {
      const rule = a as Record<string, unknown>;
      if ('exists' in rule) return Boolean(rule.exists) === present;
      if ('prefix' in rule)
        return values.some((v) => typeof v === 'string' && v.startsWith(String(rule.prefix)));
      return false;
    }
    return present && values.some((v) => v === a);
  });
}

/** Whether `event` matches an EventBridge pattern. */
export function matchesPattern(pattern: Pattern, event: Record<string, unknown>): boolean {
  return Object.entries(pattern).every(([key, expected]) => {
    const present = event !== null && typeof event === 'object' && key in event;
    const value = present ? event[key] : undefined;
    if (Array.isArray(expected)) return matchesValue(expected, value, present);
    if (expected !== null && typeof expected === 'object') {
      return (
        present &&
        value !== null &&
        typeof value === 'object' &&
        matchesPattern(expected as Pattern, value as Record<string, unknown>)
      );
    }
    return false;
  });
}

interface PatternRule {
  name: string;
  pattern: Pattern;
  targets: { Arn: string; Input?: string }[];
}

export class EventPatternRules {
  private readonly rules: PatternRule[] = [];
  private readonly invokeAsync: (functionArn: string, event: unknown) => Promise<void>;
  private readonly log: (line: string) => void;
  private readonly account: { region: string; accountId: string };

  constructor(
    resolver: TemplateResolver,
    invokeAsync: (functionArn: string, event: unknown) => Promise<void>,
    log: (line: string) => void,
    account: { region: string; accountId: string },
  ) {
    this.invokeAsync = invokeAsync;
    this.log = log;
    this.account = account;
    for (const { stack, logicalId, resource } of resolver.resourcesOfType('AWS::Events::Rule')) {
      const p = resolver.resolve(stack, resource.Properties ?? {}, logicalId) as {
        EventPattern?: Pattern;
        State?: string;
        EventBusName?: string;
        Targets?: { Arn: string; Input?: string }[];
      };
      if (!p.EventPattern || p.State === 'DISABLED') continue;
      if (p.EventBusName && p.EventBusName !== 'default') continue;
      this.rules.push({
        name: resolver.physicalName(stack, logicalId),
        pattern: p.EventPattern,
        targets: p.Targets ?? [],
      });
    }
  }

  /** Puts an event on the bus (as an AWS service does); resolves once every matching target was handed it. */
  async put(input: BusEvent): Promise<void> {
    const event = {
      version: '0',
      id: randomUUID(),
      'detail-type': input['detail-type'],
      source: input.source,
      account: this.account.accountId,
      time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      region: this.account.region,
      resources: input.resources ?? [],
      detail: input.detail,
    };
    for (const rule of this.rules) {
      if (!matchesPattern(rule.pattern, event)) continue;
      for (const target of rule.targets) {
        if (!target.Arn.includes(':lambda:')) continue;
        const payload = target.Input !== undefined ? JSON.parse(target.Input) : event;
        await this.invokeAsync(target.Arn, payload).catch((err: unknown) =>
          this.log(`[eventbridge] rule ${rule.name}: invoke failed: ${String(err)}`),
        );
      }
    }
  }
}
