/**
 * The command the CLI's hints name (init's next steps, publish's call and deploy lines): after
 * `npm install agenthost` in a project its bin is in node_modules/.bin, not on PATH, so a bare
 * `agenthost` is "command not found"; npx finds it there, as the README runs it, so the hints work
 * as copied.
 */
export const CLI_COMMAND = 'npx agenthost';
