import { randomUUID } from 'node:crypto';
import type { TemplateResolver } from './cloudformation-template.ts';

/**
 * EventBridge rules on a timetable (AWS::Events::Rule with a `rate(...)` ScheduleExpression): each
 * enabled rule sends its Lambda targets EventBridge's "Scheduled Event" at that rate, as an
 * asynchronous invoke. The first event goes out one period after the start, as with a new rule.
 */

const RATE = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/;
const UNIT_MS: Record<string, number> = {
  minute: 60_000,
  minutes: 60_000,
  hour: 3_600_000,
  hours: 3_600_000,
  day: 86_400_000,
  days: 86_400_000,
};

export function startScheduledRules(
  resolver: TemplateResolver,
  invokeAsync: (functionArn: string, event: unknown) => Promise<void>,
  log: (line: string) => void,
  account: { region: string; accountId: string } = { region: 'us-east-1', accountId: '000000000000' },
): { stop(): void } {
  const timers: NodeJS.Timeout[] = [];
  for (const { stack, logicalId, resource } of resolver.resourcesOfType('AWS::Events::Rule')) {
    const p = resolver.resolve(stack, resource.Properties ?? {}, logicalId) as {
      ScheduleExpression?: string;
      State?: string;
      Targets?: { Arn: string; Input?: string }[];
    };
    if (!p.ScheduleExpression || p.State === 'DISABLED') continue;
    const m = RATE.exec(p.ScheduleExpression);
    if (!m) {
      log(
        `[eventbridge] rule ${logicalId}: ${p.ScheduleExpression} is not emulated (only rate expressions are)`,
      );
      continue;
    }
    const periodMs = Number(m[1]) * (UNIT_MS[m[2] as string] as number);
    const ruleArn = `arn:aws:events:${account.region}:${account.accountId}:rule/${resolver.physicalName(stack, logicalId)}`;
    const fire = () => {
      for (const target of p.Targets ?? []) {
        if (!target.Arn.includes(':lambda:')) continue;
        const event =
          target.Input !== undefined
            ? JSON.parse(target.Input)
            : {
                version: '0',
                id: randomUUID(),
                'detail-type': 'Scheduled Event',
                source: 'aws.events',
                account: account.accountId,
                time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
                region: account.region,
                resources: [ruleArn],
                detail: {},
              };
        invokeAsync(target.Arn, event).catch((err: unknown) =>
          log(`[eventbridge] rule ${logicalId}: invoke failed: ${String(err)}`),
        );
      }
    };
    const timer = setInterval(fire, periodMs);
    timer.unref();
    timers.push(timer);
  }
  return {
    stop() {
      for (const t of timers) clearInterval(t);
    },
  };
}
