/**
 * `{{name}}` placeholders: in an llm agent's prompt_template (filled from the call's input) and in
 * a managed_loop custom tool's command (filled, shell-quoted, from the tool call's arguments).
 * The manifest checks that each one names a declared parameter.
 */
import { shellQuote } from '../../shared/shell-quote.ts';

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** The distinct `{{name}}` placeholders of a template or command, in order of appearance. */
export function placeholders(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

/**
 * A custom tool's command with every `{{param}}` replaced by its argument, shell-quoted: strings
 * as they are, other values as JSON, a missing (optional) argument as ''. The arguments must have
 * been validated against the tool's input_schema first.
 */
export function fillCommand(command: string, args: Record<string, unknown>): string {
  return command.replace(PLACEHOLDER, (_m, name: string) => {
    const v = args[name];
    if (v === undefined || v === null) return "''";
    return shellQuote(typeof v === 'string' ? v : JSON.stringify(v));
  });
}
