import { supervisionHooks } from '../core/services/service-supervision.ts';
import type { CoreDeps } from '../ports/core-deps.ts';

/**
 * The local deployment's one extra wiring: the service host reports crashes, readiness and logs
 * to core's supervisor, which decides (restart, back off, pause, alert). Loaded only in
 * PLATFORM_MODE=local, and left out of every Lambda bundle (lib/lambda-bundling.ts).
 */
export function bindLocalSupervision(deps: CoreDeps): void {
  deps.serviceRunner.bind(
    supervisionHooks(deps, {
      backoffMs: deps.config.serviceBackoffMs,
      healthyMs: deps.config.serviceHealthyMs,
    }),
  );
}
