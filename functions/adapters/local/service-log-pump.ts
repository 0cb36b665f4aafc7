/**
 * A local service's output on its way to the supervision hooks: split into lines, secret values
 * redacted, handed over in batches (onLog), the platform's own lines marked `[platform]`.
 */
import type { SupervisionHooks } from '../../ports/service-runner.ts';
import { LogLineCutter } from '../../shared/log-line-cutter.ts';
import { redactSecrets } from '../../shared/redact-secrets.ts';

const LOG_FLUSH_MS = 200;

/**
 * Splits output into lines (a long one cut as in AWS: shared/log-line-cutter.ts), redacts secret
 * values, and hands them to the hooks in batches.
 */
export class LogPump {
  private readonly cutters: Record<'stdout' | 'stderr', LogLineCutter>;
  private lines: { at: string; level: 'info' | 'warn' | 'error'; message: string }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly id: string;
  private readonly secrets: Record<string, string>;
  private readonly hooks: SupervisionHooks;

  constructor(id: string, secrets: Record<string, string>, hooks: SupervisionHooks) {
    this.id = id;
    this.secrets = secrets;
    this.hooks = hooks;
    this.cutters = { stdout: new LogLineCutter(secrets), stderr: new LogLineCutter(secrets) };
  }

  push(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    for (const line of this.cutters[stream].push(chunk))
      this.add(stream === 'stderr' ? 'error' : 'info', line);
  }

  platform(level: 'info' | 'warn' | 'error', message: string): void {
    this.add(level, `[platform] ${message}`);
  }

  private add(level: 'info' | 'warn' | 'error', line: string): void {
    const message = redactSecrets(line.replace(/\r$/, ''), this.secrets);
    if (message === '') return;
    this.lines.push({ at: new Date().toISOString(), level, message });
    this.timer ??= setTimeout(() => this.flush(), LOG_FLUSH_MS);
  }

  private flush(): Promise<void> {
    this.timer = undefined;
    const batch = this.lines;
    this.lines = [];
    if (batch.length > 0) this.flushing = this.flushing.then(() => this.hooks.onLog(this.id, batch));
    return this.flushing;
  }

  async close(): Promise<void> {
    for (const stream of ['stdout', 'stderr'] as const) {
      const rest = this.cutters[stream].end();
      if (rest) this.add(stream === 'stderr' ? 'error' : 'info', rest);
    }
    clearTimeout(this.timer);
    await this.flush();
  }
}
