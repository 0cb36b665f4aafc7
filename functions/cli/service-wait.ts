/**
 * Waiting for a service to run, after a deploy, restart or change: the API answers at once with
 * `state: provisioning`, and a person wants to know whether the app came up. Polls the record,
 * prints a progress line on stderr at each change (state, health, failed starts) and every 10 s
 * while nothing changes, and fails with
 * the service's last error when it pauses (a crash loop) or when the wait runs out; the service
 * itself carries on either way.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { CliContext, Client } from './cli-context.ts';
import { CliError, EXIT } from './cli-errors.ts';
import { asService, type ServiceRecord } from './service-record.ts';

export const DEFAULT_WAIT_SECONDS = 120;
const POLL_MS = 500;
/**
 * While nothing changes, the line again this often, with the time waited: a Fargate task takes 20
 * to 60 s to start (docs/sandbox-aws.md), and a silent terminal for that long looks hung.
 */
const STILL_EVERY_MS = 10_000;

function progress(s: ServiceRecord): string {
  const failures = s.consecutive_restart_failures
    ? `; ${s.consecutive_restart_failures} failed start${s.consecutive_restart_failures === 1 ? '' : 's'}${s.last_error ? `: ${s.last_error}` : ''}`
    : '';
  return `${s.state}, ${s.health_status}${failures}`;
}

export async function waitUntilRunning(
  ctx: CliContext,
  client: Client,
  ws: string,
  first: ServiceRecord,
  timeoutSeconds: number,
): Promise<ServiceRecord> {
  const started = Date.now();
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  let s = first;
  let last = '';
  let printedAt = 0;
  for (;;) {
    const line = progress(s);
    if (line !== last) {
      ctx.note(`${s.name}: ${line} (${elapsed()})`);
      last = line;
      printedAt = Date.now();
    } else if (Date.now() - printedAt >= STILL_EVERY_MS) {
      ctx.note(`${s.name}: still ${line} (${elapsed()})`);
      printedAt = Date.now();
    }
    if (s.state === 'running') return s;
    if (s.state === 'paused')
      throw new CliError(
        `service ${s.name} paused${s.paused_reason ? ` (${s.paused_reason})` : ''}${s.last_error ? `: ${s.last_error}` : ''}`,
        EXIT.server,
        `read its output with \`agenthost services logs ${s.name}\`, fix it, then \`agenthost services restart ${s.name}\``,
        'SERVICE_FAILED',
      );
    if (Date.now() - started >= timeoutSeconds * 1000)
      throw new CliError(
        `service ${s.name} is not running after ${timeoutSeconds} s (${progress(s)})`,
        EXIT.server,
        `it keeps starting in the background: \`agenthost services get ${s.name}\`, \`agenthost services logs ${s.name}\`; wait longer with --wait-timeout`,
        'TIMEOUT',
      );
    await sleep(POLL_MS);
    s = asService(await client.services.get(ws, s.id));
  }
}
