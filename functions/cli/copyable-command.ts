/**
 * The command the CLI's hints name (init's next steps and the README it writes, publish's call
 * and deploy lines): the installed CLI, on PATH, so a hint runs as copied from any directory
 * (`npm run cli:install` in the clone, docs/cli.md "Install"). Never `npx agenthost`: outside the
 * clone npx would fetch a package of that name from the public registry, which is not ours.
 */
export const CLI_COMMAND = 'agenthost';
