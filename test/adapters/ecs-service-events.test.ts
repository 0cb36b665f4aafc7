/**
 * ECS task state change events driving a service's supervision (functions/jobs/service-events.ts):
 * ready, crashes counted, a warning, a pause at the maximum, and late reports of earlier launches.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { serviceEventKeys } from '../../functions/core/services/service-events.ts';
import { launchService } from '../../functions/core/services/service-launch.ts';
import {
  loadStoredService,
  type Service,
  serviceItem,
  serviceKeys,
} from '../../functions/core/services/service-record.ts';
import { handleTaskEvent } from '../../functions/jobs/service-events.ts';
import { type AlertReceiver, startAlertReceiver } from '../helpers/alert-receiver.ts';
import { SERVICE_ID } from '../helpers/ecs-service-bench.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { publishWithFiles } from '../helpers/publish.ts';
import { fastNotifier } from '../helpers/schedules.ts';

describe('ECS task state change events drive supervision (jobs/service-events.ts)', () => {
  let p: TestPlatform;
  let receiver: AlertReceiver;
  const stops: string[] = [];
  before(async () => {
    receiver = await startAlertReceiver();
    p = await startTestPlatform({}, 'sqlite', { notifier: fastNotifier() }, { inMemory: true });
  });
  after(async () => {
    await p.close();
    await receiver.close();
  });

  const event = (detail: Record<string, unknown>) => ({
    'detail-type': 'ECS Task State Change',
    detail: { group: `service:svc-${SERVICE_ID}`, clusterArn: 'arn:cluster', ...detail },
  });

  it('ready on RUNNING+HEALTHY; a crash counts, warns at half, pauses at the maximum (desired count 0)', async () => {
    const o = await createAccount(p.deps, { org: 'ecsev', tier: 'pro' });
    const now = new Date().toISOString();
    const s: Service = {
      id: SERVICE_ID,
      workspace_id: o.workspace_id,
      name: 'web',
      agent: 'ecsev/web',
      agent_version: 'v1',
      auto_update: true,
      state: 'provisioning',
      paused_reason: null,
      crash_loop: false,
      health_status: 'starting',
      restart_count: 0,
      consecutive_restart_failures: 0,
      max_restart_failures: 4,
      crash_warning_sent: false,
      min_instances: 1,
      max_instances: 1,
      url: 'https://web-x.services.example.com',
      command: null,
      http: true,
      env: {},
      extra_secrets: [],
      secrets: [],
      alert_webhook_url: receiver.url,
      last_error: null,
      deployed_at: now,
      last_restart_at: null,
      created_by: o.account.id,
      created_at: now,
      updated_at: now,
    };
    await p.deps.store.put(serviceItem(s, 1, null));
    const deps = {
      ...p.deps,
      serviceRunner: {
        ...p.deps.serviceRunner,
        kind: 'ecs' as const,
        stop: async (id: string) => void stops.push(id),
      },
    };
    assert.equal(
      await handleTaskEvent(deps, event({ lastStatus: 'RUNNING', healthStatus: 'HEALTHY' })),
      'ready',
    );
    assert.equal((await loadStoredService(p.deps, SERVICE_ID))?.service.state, 'running');
    // A deployment replacing a task is not a crash.
    assert.equal(
      await handleTaskEvent(
        deps,
        event({
          lastStatus: 'STOPPED',
          stopCode: 'ServiceSchedulerInitiated',
          containers: [{ name: 'app', exitCode: 0 }],
        }),
      ),
      'ignored',
    );
    // Nor is the app's exit by the stop's SIGTERM (143: the launcher passes it on to the app).
    assert.equal(
      await handleTaskEvent(
        deps,
        event({
          lastStatus: 'STOPPED',
          stopCode: 'ServiceSchedulerInitiated',
          stoppedReason: 'Scaling activity initiated by (deployment ecs-svc/1234567890)',
          containers: [
            { name: 'gateway', exitCode: 0 },
            { name: 'app', exitCode: 143 },
          ],
        }),
      ),
      'ignored',
    );
    const crash = event({
      lastStatus: 'STOPPED',
      stopCode: 'EssentialContainerExited',
      startedAt: '2026-11-22T01:00:00Z',
      stoppedAt: '2026-11-22T01:00:05Z',
      containers: [
        { name: 'gateway', exitCode: 0 },
        { name: 'app', exitCode: 1 },
      ],
    });
    assert.equal(await handleTaskEvent(deps, crash), 'crash');
    assert.equal(await handleTaskEvent(deps, crash), 'crash');
    assert.equal(await handleTaskEvent(deps, crash), 'crash');
    const conflict = event({
      lastStatus: 'STOPPED',
      stopCode: 'EssentialContainerExited',
      containers: [{ name: 'app', exitCode: 98 }],
    });
    assert.equal(await handleTaskEvent(deps, conflict), 'paused');
    assert.deepEqual(stops, [SERVICE_ID]);
    const after = (await loadStoredService(p.deps, SERVICE_ID))?.service;
    assert.equal(after?.state, 'paused');
    assert.equal(after?.crash_loop, true);
    assert.match(String(after?.last_error), /8080/);
    const alerts = await receiver.waitFor(2);
    assert.deepEqual(
      alerts.map((a) => a.body.severity),
      ['warning', 'critical'],
    );
    // A task that had stayed up past the healthy period starts a new streak.
    await p.deps.store.put(
      serviceItem({ ...s, state: 'running', consecutive_restart_failures: 3 }, 50, null),
    );
    await handleTaskEvent(
      deps,
      event({
        lastStatus: 'STOPPED',
        startedAt: '2026-11-22T00:00:00Z',
        stoppedAt: '2026-11-22T02:00:00Z',
        containers: [{ name: 'app', exitCode: 1 }],
      }),
    );
    assert.equal((await loadStoredService(p.deps, SERVICE_ID))?.service.consecutive_restart_failures, 1);
  });

  it('a late report of a task created before the latest launch changes nothing (an owner restarted it meanwhile)', async () => {
    const stored = await loadStoredService(p.deps, SERVICE_ID);
    assert.ok(stored);
    // The owner's restart of a crash-looped service: provisioning, the counter cleared, launched at L.
    const launchedAt = '2026-11-22T03:00:00.000Z';
    const resumed = {
      ...stored.service,
      state: 'provisioning' as const,
      health_status: 'starting' as const,
      paused_reason: null,
      crash_loop: false,
      consecutive_restart_failures: 0,
    };
    await p.deps.store.put(serviceItem(resumed, 100, null, launchedAt));
    stops.length = 0;
    const deps = {
      ...p.deps,
      serviceRunner: { ...p.deps.serviceRunner, stop: async (id: string) => void stops.push(id) },
    };
    const timeline = async () =>
      (await p.deps.store.query({ pk: serviceEventKeys.ofService(SERVICE_ID), limit: 1000 })).items.length;
    const eventsBefore = await timeline();
    const crashOf = (createdAt: string) =>
      event({
        lastStatus: 'STOPPED',
        stopCode: 'EssentialContainerExited',
        createdAt,
        startedAt: createdAt,
        stoppedAt: '2026-11-22T03:00:20Z',
        containers: [{ name: 'app', exitCode: 1 }],
      });
    // The crash-looped launch's last task, created a second before the restart, reported after it.
    assert.equal(await handleTaskEvent(deps, crashOf('2026-11-22T02:59:59.000Z')), 'ignored');
    assert.equal(
      await handleTaskEvent(
        deps,
        event({ lastStatus: 'RUNNING', healthStatus: 'HEALTHY', createdAt: '2026-11-22T02:59:59.000Z' }),
      ),
      'ready',
    );
    let now = (await loadStoredService(p.deps, SERVICE_ID))?.service;
    assert.equal(now?.consecutive_restart_failures, 0, 'an earlier launch counts no failure');
    assert.equal(now?.state, 'provisioning', 'nor makes this launch ready');
    assert.equal(now?.restart_count, resumed.restart_count);
    assert.deepEqual(stops, [], 'the resumed service is not stopped');
    assert.equal(await timeline(), eventsBefore, 'no timeline entry');
    // This launch's task (created after L): its reports count.
    assert.equal(
      await handleTaskEvent(
        deps,
        event({ lastStatus: 'RUNNING', healthStatus: 'HEALTHY', createdAt: '2026-11-22T03:00:01.000Z' }),
      ),
      'ready',
    );
    assert.equal((await loadStoredService(p.deps, SERVICE_ID))?.service.state, 'running');
    assert.equal(await handleTaskEvent(deps, crashOf('2026-11-22T03:00:01.000Z')), 'crash');
    now = (await loadStoredService(p.deps, SERVICE_ID))?.service;
    assert.equal(now?.consecutive_restart_failures, 1);
    assert.equal(now?.restart_count, resumed.restart_count + 1);
  });

  it('an owner’s restart that lands between the pause’s record and its stop is started again, not left stopped', async () => {
    const o = await createAccount(p.deps, { org: 'ecsrace', tier: 'pro' });
    await publishWithFiles(
      p,
      o.api_key,
      {
        name: 'web',
        type: 'tool',
        description: 'A small HTTP server.',
        supported_providers: ['any'],
        runtime: { command: 'node server.mjs' },
        run_mode: 'always_on',
        timeout_seconds: 0,
      },
      { 'server.mjs': 'process.exit(1);\n' },
    );
    const stored = await loadStoredService(p.deps, SERVICE_ID);
    assert.ok(stored);
    // One failure short of its maximum, launched at L.
    const crashing = {
      ...stored.service,
      workspace_id: o.workspace_id,
      agent: 'ecsrace/web',
      agent_version: 'v1',
      state: 'running' as const,
      consecutive_restart_failures: 1,
      max_restart_failures: 2,
      alert_webhook_url: null,
    };
    await p.deps.store.put(serviceItem(crashing, 200, null, '2026-11-22T04:00:00.000Z'));
    const calls: string[] = [];
    // The owner's restart's launch: after every task below was created.
    const OWNER_RESTART = '2026-11-22T05:00:00.000Z';
    const deps = {
      ...p.deps,
      serviceRunner: {
        ...p.deps.serviceRunner,
        kind: 'ecs' as const,
        fetchesBundle: true,
        // The owner sees the service paused and restarts it before the pause's stop reaches ECS.
        stop: async (id: string) => {
          const paused = await loadStoredService(p.deps, id);
          assert.equal(paused?.service.state, 'paused');
          await p.deps.store.put(
            serviceItem(
              { ...crashing, state: 'provisioning', consecutive_restart_failures: 0 },
              (paused?.rev ?? 0) + 1,
              null,
              OWNER_RESTART,
            ),
          );
          calls.push(`stop ${id}`);
        },
        start: async (launch: { serviceId: string }) => {
          calls.push(`start ${launch.serviceId}`);
          return { url: crashing.url ?? 'https://web-x.services.example.com', port: null };
        },
      },
    };
    const crash = event({
      lastStatus: 'STOPPED',
      stopCode: 'EssentialContainerExited',
      createdAt: '2026-11-22T04:00:10.000Z',
      startedAt: '2026-11-22T04:00:10.000Z',
      stoppedAt: '2026-11-22T04:00:20.000Z',
      containers: [{ name: 'app', exitCode: 1 }],
    });
    assert.equal(await handleTaskEvent(deps, crash), 'crash');
    assert.deepEqual(calls, [`stop ${SERVICE_ID}`, `start ${SERVICE_ID}`], 'the restart’s launch runs');
    const relaunched = await loadStoredService(p.deps, SERVICE_ID);
    assert.equal(relaunched?.service.state, 'provisioning');
    // Launched again by the function (its own launch time, the platform's clock), not only the owner's.
    assert.equal(relaunched?.launchedAt, p.deps.clock.now().toISOString());

    // The same race, with a start that fails: recorded on the service, not thrown (a retry of
    // the event would find its task an earlier launch's and do nothing).
    calls.length = 0;
    await p.deps.store.put(
      serviceItem(crashing, (relaunched?.rev ?? 0) + 1, null, '2026-11-22T04:01:00.000Z'),
    );
    const failing = {
      ...deps,
      serviceRunner: {
        ...deps.serviceRunner,
        start: async () => {
          calls.push('start');
          throw new Error('ECS refused the update');
        },
      },
    };
    const later = { ...crash, detail: { ...crash.detail, createdAt: '2026-11-22T04:01:10.000Z' } };
    assert.equal(await handleTaskEvent(failing, later), 'crash');
    assert.deepEqual(calls, [`stop ${SERVICE_ID}`, 'start']);
    const failed = (await loadStoredService(p.deps, SERVICE_ID))?.service;
    assert.equal(failed?.health_status, 'unhealthy');
    assert.equal(failed?.last_error, 'the runner could not start it');
  });

  it('a launch of a service whose record is gone (deleted meanwhile) starts nothing', async () => {
    const stored = await loadStoredService(p.deps, SERVICE_ID);
    assert.ok(stored);
    await p.deps.store.delete(serviceKeys.service(SERVICE_ID));
    const starts: string[] = [];
    const deps = {
      ...p.deps,
      serviceRunner: {
        ...p.deps.serviceRunner,
        fetchesBundle: true,
        start: async (launch: { serviceId: string }) => {
          starts.push(launch.serviceId);
          return { url: 'https://web-x.services.example.com', port: null };
        },
      },
    };
    await launchService(deps, stored, 'resume');
    assert.deepEqual(starts, [], 'no task, listener or ECS service made again for a deleted service');
  });
});
