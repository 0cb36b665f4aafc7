import { useState } from 'preact/hooks';
import type { AgentHostClient } from '../api-client.ts';
import { ApiError } from '../api-error.tsx';
import { CronNextRuns } from './cron-next-runs.tsx';
import { TimeZoneSelect } from './time-zone-select.tsx';

/** A schedule as lists give it (a single one's answer adds its metadata). */
export type Schedule = Awaited<ReturnType<AgentHostClient['schedules']['list']>>['schedules'][number];
export type ScheduleCreate = Parameters<AgentHostClient['schedules']['create']>[1];
export type ScheduleChange = Parameters<AgentHostClient['schedules']['update']>[2];

const PROVIDERS = ['anthropic', 'openai', 'google', 'ollama'] as const;
type Provider = (typeof PROVIDERS)[number];

/** What the form holds, as typed (numbers stay text until sent: blank means the API's default). */
interface Fields {
  agent: string;
  type: 'cron' | 'webhook';
  cron: string;
  timezone: string;
  input: string;
  provider: string;
  enabled: boolean;
  autoUpdate: boolean;
  version: string;
  maxFailures: string;
  alertUrl: string;
  clearAlertUrl: boolean;
  alertAfter: string;
}

function fieldsOf(s: Schedule | undefined): Fields {
  return {
    agent: s?.agent ?? '',
    type: s?.type ?? 'cron',
    cron: s?.cron_expression ?? '0 9 * * *',
    timezone: s?.timezone ?? 'UTC',
    input: JSON.stringify(s?.input_data ?? {}, null, 2),
    provider: s?.provider ?? '',
    enabled: s?.enabled ?? true,
    autoUpdate: s?.auto_update ?? true,
    version: '',
    maxFailures: s ? String(s.max_consecutive_failures) : '',
    // An alert URL may carry its receiver's token (a chat hook): it is not echoed back into the page.
    alertUrl: '',
    clearAlertUrl: false,
    alertAfter: s ? String(s.alert_on_failure_count) : '',
  };
}

class FormProblem extends Error {}

function parseInput(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text.trim() === '' ? '{}' : text);
  } catch (err) {
    throw new FormProblem(`Input data is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new FormProblem('Input data must be a JSON object, such as {"city": "Paris"}.');
  return value as Record<string, unknown>;
}

function optionalInt(text: string, label: string): number | undefined {
  if (text.trim() === '') return undefined;
  const n = Number(text);
  if (!Number.isInteger(n)) throw new FormProblem(`${label} must be a whole number.`);
  return n;
}

/** The create body: only what the user set, so the API's defaults apply to the rest. */
function createBody(f: Fields): ScheduleCreate {
  const max = optionalInt(f.maxFailures, 'Disable after');
  const alertAfter = optionalInt(f.alertAfter, 'Alert after');
  return {
    agent: f.agent.trim(),
    type: f.type,
    ...(f.type === 'cron' ? { cron_expression: f.cron.trim(), timezone: f.timezone } : {}),
    input_data: parseInput(f.input) as ScheduleCreate['input_data'],
    ...(f.provider ? { provider: f.provider as Provider } : {}),
    enabled: f.enabled,
    ...(max !== undefined ? { max_consecutive_failures: max } : {}),
    ...(f.alertUrl.trim() ? { alert_webhook_url: f.alertUrl.trim() } : {}),
    ...(alertAfter !== undefined ? { alert_on_failure_count: alertAfter } : {}),
  };
}

/** The patch: the fields that differ from the schedule as loaded (the API takes any subset). */
function changeBody(f: Fields, s: Schedule): ScheduleChange {
  const change: ScheduleChange = {};
  if (s.type === 'cron') {
    if (f.cron.trim() !== s.cron_expression) change.cron_expression = f.cron.trim();
    if (f.timezone !== s.timezone) change.timezone = f.timezone;
  }
  const input = parseInput(f.input);
  if (JSON.stringify(input) !== JSON.stringify(s.input_data))
    change.input_data = input as ScheduleChange['input_data'];
  if ((f.provider || null) !== s.provider) change.provider = (f.provider || null) as Provider | null;
  if (f.version.trim()) change.version = f.version.trim();
  else if (f.autoUpdate !== s.auto_update) change.auto_update = f.autoUpdate;
  const max = optionalInt(f.maxFailures, 'Disable after');
  if (max !== undefined && max !== s.max_consecutive_failures) change.max_consecutive_failures = max;
  const alertAfter = optionalInt(f.alertAfter, 'Alert after');
  if (alertAfter !== undefined && alertAfter !== s.alert_on_failure_count)
    change.alert_on_failure_count = alertAfter;
  if (f.clearAlertUrl) change.alert_webhook_url = null;
  else if (f.alertUrl.trim()) change.alert_webhook_url = f.alertUrl.trim();
  return change;
}

/**
 * A schedule's settings: a new one (`onCreate`) or changes to `schedule` (`onChange`, only the
 * fields that differ). The cron expression shows its next five runs in the chosen zone as it is
 * typed. The API's refusal (code and message) stays under the form.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: one form component: its fields' state and the cron preview share the component's hooks
export function ScheduleForm(
  props:
    | { schedule?: undefined; onCreate: (body: ScheduleCreate) => Promise<unknown> }
    | { schedule: Schedule; onChange: (body: ScheduleChange) => Promise<unknown> },
) {
  const editing = props.schedule;
  const [f, setF] = useState<Fields>(() => fieldsOf(editing));
  const [problem, setProblem] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState<string | null>(null);
  const set = <K extends keyof Fields>(key: K, value: Fields[K]) => {
    setSaved(null);
    setF((prev) => ({ ...prev, [key]: value }));
  };
  const idp = editing ? `edit-${editing.id.slice(0, 8)}` : 'new-schedule';

  const submit = async (e: Event) => {
    e.preventDefault();
    setProblem(null);
    setError(null);
    setSaved(null);
    try {
      if (props.schedule) {
        const change = changeBody(f, props.schedule);
        if (Object.keys(change).length === 0) return setSaved('Nothing changed.');
        setBusy(true);
        await props.onChange(change);
        setF((prev) => ({ ...prev, version: '', alertUrl: '', clearAlertUrl: false }));
        setSaved('Saved.');
      } else {
        const body = createBody(f);
        setBusy(true);
        await props.onCreate(body);
      }
    } catch (err) {
      if (err instanceof FormProblem) setProblem(err.message);
      else setError(err);
    } finally {
      setBusy(false);
    }
  };

  const type = editing?.type ?? f.type;
  return (
    <form class="stack" onSubmit={submit} aria-label={editing ? 'Edit schedule' : 'New schedule'}>
      {!editing && (
        <>
          <label>
            <span>Agent (org/agent follows new versions; org/agent@v2 pins one)</span>
            <input
              id={`${idp}-agent`}
              required
              value={f.agent}
              placeholder="acme/daily-report"
              onInput={(e) => set('agent', e.currentTarget.value)}
            />
          </label>
          <fieldset class="inline-choices">
            <legend>Runs</legend>
            <label>
              <input
                type="radio"
                name={`${idp}-type`}
                checked={f.type === 'cron'}
                onChange={() => set('type', 'cron')}
              />{' '}
              on a cron timetable
            </label>
            <label>
              <input
                type="radio"
                name={`${idp}-type`}
                checked={f.type === 'webhook'}
                onChange={() => set('type', 'webhook')}
              />{' '}
              when its webhook URL is called
            </label>
          </fieldset>
        </>
      )}
      {type === 'cron' && (
        <>
          <label>
            <span>Cron expression (minute hour day-of-month month day-of-week)</span>
            <input
              id={`${idp}-cron`}
              required
              value={f.cron}
              spellcheck={false}
              autocomplete="off"
              onInput={(e) => set('cron', e.currentTarget.value)}
            />
          </label>
          <label htmlFor={`${idp}-tz`}>
            <span>Time zone</span>
            <TimeZoneSelect id={`${idp}-tz`} value={f.timezone} onChange={(z) => set('timezone', z)} />
          </label>
          <CronNextRuns expression={f.cron} timeZone={f.timezone} />
        </>
      )}
      <label>
        <span>Input data (JSON object{type === 'webhook' ? '; a call’s body is merged over it' : ''})</span>
        <textarea
          id={`${idp}-input`}
          value={f.input}
          spellcheck={false}
          onInput={(e) => set('input', e.currentTarget.value)}
        />
      </label>
      <label>
        <span>Provider</span>
        <select value={f.provider} onChange={(e) => set('provider', e.currentTarget.value)}>
          <option value="">The agent’s default</option>
          {PROVIDERS.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>Disable after this many failures in a row (1-100; default 10)</span>
        <input
          type="number"
          min={1}
          max={100}
          value={f.maxFailures}
          onInput={(e) => set('maxFailures', e.currentTarget.value)}
        />
      </label>
      <label>
        <span>
          Alert webhook URL (a POST after failures in a row)
          {editing?.alert_webhook_url ? ': one is set; a new one replaces it' : ''}
        </span>
        <input
          type="url"
          value={f.alertUrl}
          placeholder="https://hooks.example.com/…"
          onInput={(e) => set('alertUrl', e.currentTarget.value)}
        />
      </label>
      {editing?.alert_webhook_url && (
        <label class="checkbox">
          <input
            type="checkbox"
            checked={f.clearAlertUrl}
            onChange={(e) => set('clearAlertUrl', e.currentTarget.checked)}
          />{' '}
          Remove the alert URL
        </label>
      )}
      <label>
        <span>Alert after this many failures in a row (1-100; default 3)</span>
        <input
          type="number"
          min={1}
          max={100}
          value={f.alertAfter}
          onInput={(e) => set('alertAfter', e.currentTarget.value)}
        />
      </label>
      {editing ? (
        <>
          <label class="checkbox">
            <input
              type="checkbox"
              checked={f.autoUpdate}
              onChange={(e) => set('autoUpdate', e.currentTarget.checked)}
            />{' '}
            Follow new versions of the agent (auto-update)
          </label>
          <label>
            <span>Pin a version (such as v2; turns auto-update off)</span>
            <input
              value={f.version}
              placeholder="v2"
              onInput={(e) => set('version', e.currentTarget.value)}
            />
          </label>
        </>
      ) : (
        <label class="checkbox">
          <input
            type="checkbox"
            checked={f.enabled}
            onChange={(e) => set('enabled', e.currentTarget.checked)}
          />{' '}
          Enabled from the start
        </label>
      )}
      {problem && (
        <p class="bad" role="alert">
          {problem}
        </p>
      )}
      {error !== null && <ApiError error={error} title={editing ? 'Not saved' : 'Not created'} />}
      <div class="toolbar">
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : editing ? 'Save changes' : 'Create schedule'}
        </button>
        {saved && <span aria-live="polite">{saved}</span>}
      </div>
    </form>
  );
}
