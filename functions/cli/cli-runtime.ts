/** What a command module gets from the program (program.ts): the streams, and the action wrapper. */
import type { CliContext, CliIo } from './cli-context.ts';

/** A command's action, given its context; a returned number is the exit code. */
export type Action<A extends unknown[]> = (ctx: CliContext, ...args: A) => Promise<unknown>;

export interface CliRuntime {
  io: CliIo;
  /** Wraps a command's action: builds its context; a returned number is the exit code. */
  action<A extends unknown[]>(fn: Action<A>): (...args: unknown[]) => Promise<void>;
}
