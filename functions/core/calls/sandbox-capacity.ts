import { SandboxCapacityError, type SandboxSession } from '../../ports/sandbox.ts';
import { PlatformError } from '../../shared/errors.ts';

/**
 * A run for which no sandbox could start within its deadline, the platform's ceiling of sandboxes
 * or its cloud account's quota reached, answers 503 SERVICE_UNAVAILABLE with Retry-After and the
 * cause (docs/sandbox-aws.md, "When no runner can start"), never a 500: nothing is wrong with the
 * call, and the same call later is likely to run. 503 rather than 429 for the ceiling too: it is
 * the platform's capacity, shared by every caller, not a limit of the caller's own.
 */
export function capacityAnswer(err: SandboxCapacityError): PlatformError {
  return new PlatformError('SERVICE_UNAVAILABLE', err.message, {
    suggested_wait_time: err.retryAfterSeconds,
    cause: CAUSES[err.reason],
  });
}

/** `details.cause` of the 503, by the sandbox's reason. */
const CAUSES: Record<SandboxCapacityError['reason'], string> = {
  ceiling: 'sandbox_ceiling',
  quota: 'cloud_quota',
  capacity: 'cloud_capacity',
  start: 'sandbox_start',
};

/** The session, its capacity errors answered as capacityAnswer says (they come with its first command). */
export function answeringCapacity(session: SandboxSession): SandboxSession {
  const answer = <T>(p: Promise<T>): Promise<T> =>
    p.catch((err: unknown) => {
      throw err instanceof SandboxCapacityError ? capacityAnswer(err) : err;
    });
  return {
    get workDir() {
      return session.workDir;
    },
    exec: (command, options) => answer(session.exec(command, options)),
    readFile: (path) => answer(session.readFile(path)),
    writeFile: (path, data) => answer(session.writeFile(path, data)),
    listFiles: (path) => answer(session.listFiles(path)),
    close: () => session.close(),
  };
}
