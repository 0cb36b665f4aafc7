import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'preact/hooks';
import { CopyButton } from '../components/copy-button.tsx';
import { LoadMore, useOffsetList } from '../components/load-more.tsx';
import { QueryState } from '../components/query-state.tsx';
import { ScheduleForm } from '../components/schedule-form.tsx';
import { formatTime } from '../format.ts';
import { type PageProps, pageHref } from '../page-links.ts';
import { failureStreak, scheduleState } from '../schedule-state.ts';
import { useSession } from '../session.tsx';
import { ScheduleDetail } from './schedule-detail.tsx';

/** `#/schedules` lists them (and creates one); `#/schedules/<id>` is one schedule. */
export function Schedules({ params }: PageProps) {
  return params[0] ? <ScheduleDetail id={params[0]} /> : <ScheduleList />;
}

/** The webhook URL of a schedule just created: its secret is in it, and the API gives it only now. */
interface Created {
  id: string;
  agent: string;
  webhookUrl: string | undefined;
}

function ScheduleList() {
  const { client, workspaceId } = useSession();
  const queryClient = useQueryClient();
  const [type, setType] = useState<'' | 'cron' | 'webhook'>('');
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<Created | null>(null);
  const list = useOffsetList(['schedules', workspaceId, 'list', type], async (page) => {
    const { schedules, total } = await client.schedules.list(workspaceId, {
      ...page,
      ...(type ? { type } : {}),
    });
    return { items: schedules, total };
  });

  return (
    <div class="schedules">
      <h1>Schedules</h1>
      <div class="toolbar">
        <label>
          <span>Type </span>
          <select value={type} onChange={(e) => setType(e.currentTarget.value as typeof type)}>
            <option value="">All</option>
            <option value="cron">Cron</option>
            <option value="webhook">Webhook</option>
          </select>
        </label>
        <button
          type="button"
          class={creating ? 'secondary' : ''}
          aria-expanded={creating}
          onClick={() => setCreating(!creating)}
        >
          {creating ? 'Close the form' : 'New schedule'}
        </button>
      </div>

      {created && (
        <section class="shown-once" aria-labelledby="created-heading" data-testid="schedule-created">
          <h2 id="created-heading">Schedule created</h2>
          {created.webhookUrl ? (
            <>
              <p>
                Its webhook URL, with the secret that lets anyone who has it run{' '}
                <strong>{created.agent}</strong>. <strong>It is shown this once</strong>: copy it now. To
                replace it, delete the schedule and create another.
              </p>
              <p>
                <code data-testid="webhook-url">{created.webhookUrl}</code>
              </p>
              <CopyButton value={created.webhookUrl} label="Copy the webhook URL" />
            </>
          ) : (
            <p>
              <strong>{created.agent}</strong> runs on its timetable.
            </p>
          )}
          <p>
            <a href={pageHref('/schedules', created.id)}>Open the schedule</a>{' '}
            <button type="button" class="secondary" onClick={() => setCreated(null)}>
              Dismiss
            </button>
          </p>
        </section>
      )}

      {creating && (
        <section aria-labelledby="new-heading">
          <h2 id="new-heading">New schedule</h2>
          <ScheduleForm
            onCreate={async (body) => {
              const s = await client.schedules.create(workspaceId, body);
              setCreated({
                id: s.id,
                agent: s.agent,
                webhookUrl: typeof s.webhook_url === 'string' ? s.webhook_url : undefined,
              });
              setCreating(false);
              await queryClient.invalidateQueries({ queryKey: ['schedules', workspaceId] });
            }}
          />
        </section>
      )}

      <QueryState query={list.query} what="schedules" />
      {list.query.isSuccess &&
        (list.items.length === 0 ? (
          <p>No {type ? `${type} ` : ''}schedules in this workspace.</p>
        ) : (
          <>
            <div class="table-scroll">
              <table data-testid="schedules">
                <thead>
                  <tr>
                    <th scope="col">Agent</th>
                    <th scope="col">Type</th>
                    <th scope="col">When</th>
                    <th scope="col">Next run</th>
                    <th scope="col">Last status</th>
                    <th scope="col">Failures in a row</th>
                    <th scope="col">State</th>
                  </tr>
                </thead>
                <tbody>
                  {list.items.map((s) => {
                    const state = scheduleState(s);
                    return (
                      <tr key={s.id}>
                        <td>
                          <a href={pageHref('/schedules', s.id)}>
                            {s.agent}@{s.agent_version}
                          </a>
                          {s.pinned && <span class="muted"> (pinned)</span>}
                        </td>
                        <td>{s.type}</td>
                        <td>
                          {s.type === 'cron' ? (
                            <>
                              <code>{s.cron_expression}</code> <span class="muted">{s.timezone}</span>
                            </>
                          ) : (
                            <span class="muted">on its webhook</span>
                          )}
                        </td>
                        <td>{formatTime(s.next_run_at)}</td>
                        <td class={s.last_status && s.last_status !== 'success' ? 'bad' : ''}>
                          {s.last_status ?? '—'}
                        </td>
                        <td class={s.consecutive_failures > 0 ? 'bad' : ''}>{failureStreak(s)}</td>
                        <td class={state.tone}>{state.text}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
            <LoadMore list={list} />
          </>
        ))}
    </div>
  );
}
