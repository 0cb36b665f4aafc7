/**
 * The seconds a call may run, by its kind (functions/core/calls/deadline.ts callSeconds): a run by
 * the agent's run_timeout_seconds (else timeout_seconds), the caller's tier and
 * PLATFORM_MAX_RUN_SECONDS; a waiting or streamed call by timeout_seconds within 300 s. Through the
 * API: test/api/run-limits.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AgentVersion } from '../../functions/core/agents/agent-record.ts';
import { callSeconds } from '../../functions/core/calls/deadline.ts';
import { parseConfig } from '../../functions/platform/config.ts';
import type { CoreDeps } from '../../functions/ports/core-deps.ts';
import { ENV } from '../../functions/shared/env-names.ts';
import { ok, prompt } from '../helpers/manifests.ts';

const depsWith = (env: Record<string, string> = {}) => ({ config: parseConfig(env) }) as CoreDeps;
const agentWith = (fields: Record<string, unknown>) =>
  ({ manifest: ok({ ...prompt, ...fields }) }) as AgentVersion;

describe('callSeconds', () => {
  const long = agentWith({ run_timeout_seconds: 3600 });

  it('a run: run_timeout_seconds within the caller’s tier', () => {
    const deps = depsWith();
    assert.equal(callSeconds(deps, long, { run: true, tier: 'pro' }), 3600);
    assert.equal(callSeconds(deps, long, { run: true, tier: 'team' }), 3600);
    assert.equal(callSeconds(deps, long, { run: true, tier: 'enterprise' }), 3600);
    assert.equal(callSeconds(deps, long, { run: true, tier: 'free' }), 300);
    // A run is a run whether or not it opens events as a streamed call does.
    assert.equal(callSeconds(deps, long, { run: true, streamed: true, tier: 'pro' }), 3600);
  });

  it('a run without run_timeout_seconds lasts timeout_seconds', () => {
    const deps = depsWith();
    assert.equal(callSeconds(deps, agentWith({ timeout_seconds: 120 }), { run: true, tier: 'pro' }), 120);
    assert.equal(callSeconds(deps, agentWith({}), { run: true, tier: 'pro' }), 300);
    // Shorter than the request timeout, if the author says so.
    const short = agentWith({ timeout_seconds: 200, run_timeout_seconds: 60 });
    assert.equal(callSeconds(deps, short, { run: true, tier: 'pro' }), 60);
  });

  it('PLATFORM_MAX_RUN_SECONDS caps every run', () => {
    const deps = depsWith({ [ENV.maxRunSeconds]: '900' });
    assert.equal(callSeconds(deps, long, { run: true, tier: 'enterprise' }), 900);
    assert.equal(callSeconds(deps, long, { run: true, tier: 'free' }), 300);
    assert.throws(() => depsWith({ [ENV.maxRunSeconds]: '3601' }), /PLATFORM_MAX_RUN_SECONDS/);
    assert.throws(() => depsWith({ [ENV.maxRunSeconds]: '0' }), /PLATFORM_MAX_RUN_SECONDS/);
  });

  it('a waiting or streamed call keeps the request timeout, whatever run_timeout_seconds says', () => {
    const deps = depsWith({ [ENV.maxCallSeconds]: '28', [ENV.maxStreamedCallSeconds]: '300' });
    assert.equal(callSeconds(deps, long, { tier: 'pro' }), 28);
    assert.equal(callSeconds(deps, long, { streamed: true, tier: 'pro' }), 300);
  });
});
