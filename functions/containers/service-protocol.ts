/**
 * What the ECS service runner (functions/adapters/aws/ecs-service-runner.ts) and the programs of a
 * service task (service-gateway.ts, service-app-launcher.ts) agree on: ports, exit statuses, the
 * variables the task definition sets, and the app container's entry point,
 * SERVICE_APP_BOOTSTRAP. The programs must not import the adapter (their bundles would carry the
 * AWS SDK), and service-events.ts reads the exit statuses.
 */

/** The gateway's port in the task (spec). */
export const GATEWAY_PORT = 8080;
/** The app's default port (spec): PORT and PLATFORM_HTTP_PORT in the app's environment. */
export const APP_PORT = 3000;

/** Both containers exit with this when the app took the gateway's port. */
export const PORT_CONFLICT_EXIT = 98;
/** The launcher found no entrypoint: no restart can fix it (service-events pauses at once). */
export const NO_ENTRYPOINT_EXIT = 78;
/** The launcher (or its bootstrap) could not download or unpack what it needs. */
export const LAUNCH_FAILED_EXIT = 70;
/** The bundle's dependency install failed. */
export const INSTALL_FAILED_EXIT = 71;

/**
 * The app container's variables for the launcher, removed from the app's environment: the
 * presigned GET URLs of the launcher and the bundle, the bundle's format, the command override and
 * the names of the variables holding secret values (to redact). AGENTHOST_APP_DIR (where the
 * bundle is unpacked, /tmp/app by default) exists for tests.
 */
export const LAUNCHER_URL_ENV = 'AGENTHOST_LAUNCHER_URL';
export const BUNDLE_URL_ENV = 'AGENTHOST_BUNDLE_URL';
export const BUNDLE_FORMAT_ENV = 'AGENTHOST_BUNDLE_FORMAT';
export const COMMAND_ENV = 'AGENTHOST_COMMAND';
export const SECRET_NAMES_ENV = 'AGENTHOST_SECRET_NAMES';
export const APP_DIR_ENV = 'AGENTHOST_APP_DIR';
export const LAUNCHER_ENV = [
  LAUNCHER_URL_ENV,
  BUNDLE_URL_ENV,
  BUNDLE_FORMAT_ENV,
  COMMAND_ENV,
  SECRET_NAMES_ENV,
  APP_DIR_ENV,
] as const;

/** The gateway's variables: whether the app serves HTTP, and (tests) the gateway's own port. */
export const HTTP_ENV = 'AGENTHOST_HTTP';
export const GATEWAY_PORT_ENV = 'AGENTHOST_GATEWAY_PORT';

/**
 * The app container's entry point (`node -e SERVICE_APP_BOOTSTRAP`). A task definition must fit in
 * 64 KiB and the launcher with its archive readers (tar, yauzl) is far larger, so the platform
 * uploads the bundled launcher to S3 on every start and the task gets a presigned URL of it, as it
 * gets one of the bundle. This removes the URL from its own environment, downloads the launcher,
 * and runs it (a CommonJS module exporting `run()`). A failure before the launcher runs is a
 * `[platform]` line and LAUNCH_FAILED_EXIT, as the launcher reports its own.
 */
export const SERVICE_APP_BOOTSTRAP = [
  "'use strict';",
  `const url = process.env.${LAUNCHER_URL_ENV};`,
  `delete process.env.${LAUNCHER_URL_ENV};`,
  '(async () => {',
  `  if (!url) throw new Error('${LAUNCHER_URL_ENV} is not set');`,
  '  const r = await fetch(url);',
  "  if (!r.ok) throw new Error('launcher download failed with HTTP ' + r.status);",
  '  const mod = { exports: {} };',
  "  new Function('module', 'exports', 'require', await r.text())(mod, mod.exports, require);",
  '  await mod.exports.run();',
  '})().catch((err) => {',
  "  process.stderr.write('[platform] the launcher could not start: ' + String((err && err.message) || err).slice(0, 1000) + '\\n');",
  `  process.exit(${LAUNCH_FAILED_EXIT});`,
  '});',
].join('\n');
