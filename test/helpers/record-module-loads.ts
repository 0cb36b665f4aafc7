/**
 * Preloaded with `--import` in a process a test starts: writes the URL of every module the process
 * loaded, one a line, to the file named by RECORD_MODULE_LOADS when the process exits. How a test
 * checks what a start loads (test/cli/cli-start-modules.test.ts).
 */
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const loaded: string[] = [];
registerHooks({
  load(url, context, nextLoad) {
    loaded.push(url);
    return nextLoad(url, context);
  },
});
process.on('exit', () => {
  const file = process.env.RECORD_MODULE_LOADS;
  if (file) writeFileSync(file, `${loaded.join('\n')}\n`);
});
