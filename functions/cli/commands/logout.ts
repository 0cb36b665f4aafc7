/** `agenthost logout`: removes the profile's key from the config file (the key stays valid). */
import type { Command } from 'commander';
import { readConfigFile, writeConfigFile } from '../cli-config.ts';
import type { CliRuntime } from '../cli-runtime.ts';

export function registerLogout(program: Command, cli: CliRuntime): void {
  program
    .command('logout')
    .description(
      'Remove the profile’s API key from the config file (the key itself stays valid: revoke it with `keys revoke`)',
    )
    .addHelpText('after', ['', 'Example:', '  agenthost logout --profile ci'].join('\n'))
    .action(
      cli.action(async (ctx) => {
        const file = await readConfigFile(ctx.configPath);
        const name = await ctx.profileName();
        const profile = file.profiles[name];
        if (!profile?.api_key) {
          ctx.note(`profile ${name} holds no key`);
          return;
        }
        delete profile.api_key;
        await writeConfigFile(ctx.configPath, file);
        ctx.note(`removed the key of profile ${name} from ${ctx.configPath}`);
      }),
    );
}
