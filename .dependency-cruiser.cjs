/**
 * The layers of docs/architecture.md (shared/DESIGN.md), as rules `npm run lint` enforces with
 * dependency-cruiser. Each rule names the layer it guards; a violation or a cycle fails the build.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'Modules import each other in one direction only.',
      from: { path: '^(functions|lib|bin|sdk|web)/' },
      to: { circular: true },
    },
    {
      name: 'shared-imports-only-shared',
      severity: 'error',
      comment:
        'Shared helpers (errors, logger, redaction, archives, cron, entrypoints) are the bottom layer.',
      from: { path: '^functions/shared/' },
      to: { path: '^functions/', pathNot: '^functions/shared/' },
    },
    {
      name: 'ports-import-only-ports',
      severity: 'error',
      comment: 'Ports are interfaces: they depend on other ports and shared helpers only.',
      from: { path: '^functions/ports/' },
      to: { path: '^functions/', pathNot: '^functions/(ports|shared)/' },
    },
    {
      name: 'core-imports-only-core-and-ports',
      severity: 'error',
      comment: 'Domain logic talks to ports; it never reaches adapters, platform, http, jobs or I/O helpers.',
      from: { path: '^functions/core/' },
      to: { path: '^functions/', pathNot: '^functions/(core|ports|shared)/' },
    },
    {
      name: 'adapters-import-only-ports-and-shared',
      severity: 'error',
      comment:
        'Adapters implement ports with shared helpers; they never call domain logic, entry points or the composition roots.',
      from: { path: '^functions/adapters/' },
      // The ECS adapters speak to the programs in their tasks through the protocols they share.
      to: {
        path: '^functions/',
        pathNot: ['^functions/(adapters|ports|shared)/', '^functions/containers/[a-z-]+-protocol\\.ts$'],
      },
    },
    {
      name: 'containers-import-only-containers-and-shared',
      severity: 'error',
      comment:
        "Programs inside ECS tasks share helpers (the local sandbox's too), never domain logic, entry points or adapters.",
      from: { path: '^functions/containers/' },
      to: { path: '^functions/', pathNot: '^functions/(containers|shared)/' },
    },
    {
      name: 'entry-points-never-import-adapters',
      severity: 'error',
      comment:
        'http and jobs are thin entry points over core and platform; the composition root picks adapters.',
      from: { path: '^functions/(http|jobs)/' },
      to: { path: '^functions/adapters/' },
    },
    {
      name: 'no-upward-imports-from-platform',
      severity: 'error',
      comment:
        "platform (config, composition of deps, the HTTP edge) sits below the entry points: only the local platform's composition (functions/local-platform/), above both, starts the jobs and serves the http operations.",
      from: { path: '^functions/platform/' },
      to: { path: '^functions/(http|jobs|cli|local-platform)/' },
    },
    {
      name: 'edge-is-deployment-neutral',
      severity: 'error',
      comment:
        "The edge (functions/edge/) is one Fetch API app for every host: it never reaches a host's sockets (node:http, node:net), Lambda's types, the hosts themselves (local-platform, the Lambda shells in http), the jobs or the CLI.",
      from: { path: '^functions/edge/' },
      to: {
        path: [
          '^(node:)?(http|https|http2|net|tls)$',
          '(^|/)(@types/)?aws-lambda(/|$)',
          '^functions/(http|jobs|cli|local-platform)/',
        ],
      },
    },
    {
      name: 'entry-points-never-import-the-local-composition',
      severity: 'error',
      comment:
        'http and jobs are served by the local platform and by Lambda alike; neither knows the local composition.',
      from: { path: '^functions/(edge|http|jobs|core|adapters|ports|shared|containers)/' },
      to: { path: '^functions/local-platform/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.cjs'] },
  },
};
