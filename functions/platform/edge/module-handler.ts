import type { Deps } from '../deps.ts';
import type { CredentialChecks } from '../keyless-bodies.ts';
import type { OperationId, ResourceModule } from '../routes.ts';
import { type ApiHandler, lambdaShell } from './lambda-shell.ts';
import type { AnyOperation, Operations } from './operations.ts';
import { createPlatformApp } from './platform-app.ts';

/**
 * The Lambda handler of one API resource module (functions/http/<module>.ts): the platform's app
 * with that module's operations, in the buffered Lambda shell.
 */
export function createModuleHandler<M extends ResourceModule>(
  _module: M,
  operations: Operations<M>,
  getDeps: () => Promise<Deps>,
  credentialChecks: CredentialChecks = {},
): ApiHandler {
  return lambdaShell(
    createPlatformApp(getDeps, operations as Partial<Record<OperationId, AnyOperation>>, {
      credentialChecks,
    }),
    // A frozen function exports nothing: the invocation's spans go before it ends.
    async () => (await getDeps()).tracer.flush(),
  );
}
