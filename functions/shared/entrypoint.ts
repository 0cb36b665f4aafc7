/**
 * The entrypoint auto-scan (spec priority 3, after the deploy-time override and run_command): the
 * first of these found at the top of the bundle, run with the matching interpreter. A package.json
 * with a `start` script comes first, as `npm start`.
 */
export const ENTRYPOINT_SCAN: { file: string; command: string }[] = [
  { file: 'main.py', command: 'python3 main.py' },
  { file: 'app.py', command: 'python3 app.py' },
  { file: 'server.py', command: 'python3 server.py' },
  { file: 'index.js', command: 'node index.js' },
  { file: 'server.js', command: 'node server.js' },
  { file: 'app.js', command: 'node app.js' },
  { file: 'main.js', command: 'node main.js' },
  { file: 'index.mjs', command: 'node index.mjs' },
  { file: 'server.mjs', command: 'node server.mjs' },
  { file: 'main.mjs', command: 'node main.mjs' },
  { file: 'index.ts', command: 'node index.ts' },
  { file: 'main.sh', command: 'sh main.sh' },
  { file: 'start.sh', command: 'sh start.sh' },
];

/** The command to start, from the bundle's top-level files and its package.json (if any). */
export function detectEntrypoint(files: string[], packageJson: string | undefined): string | null {
  if (packageJson) {
    try {
      const pkg = JSON.parse(packageJson) as { scripts?: Record<string, unknown> };
      if (typeof pkg.scripts?.start === 'string' && pkg.scripts.start.trim() !== '') return 'npm start';
    } catch {
      // An unreadable package.json is not a start script; keep scanning.
    }
  }
  const present = new Set(files);
  return ENTRYPOINT_SCAN.find((e) => present.has(e.file))?.command ?? null;
}

/**
 * The dependency install, when the bundle declares dependencies: `npm install` for a package.json
 * with dependencies, pip into `.python-packages` (on PYTHONPATH) for a non-empty requirements.txt.
 */
export function installCommand(
  packageJson: string | undefined,
  requirements: string | undefined,
): string | null {
  const steps: string[] = [];
  if (packageJson) {
    try {
      const pkg = JSON.parse(packageJson) as { dependencies?: Record<string, unknown> };
      if (pkg.dependencies && Object.keys(pkg.dependencies).length > 0) {
        steps.push('npm install --omit=dev --no-audit --no-fund --loglevel=error');
      }
    } catch {
      // Not JSON: npm would fail on it; the start will say so.
    }
  }
  if (requirements && requirements.split('\n').some((l) => l.trim() !== '' && !l.trim().startsWith('#'))) {
    steps.push(
      'python3 -m pip install --disable-pip-version-check -q -r requirements.txt --target .python-packages',
    );
  }
  return steps.length > 0 ? steps.join(' && ') : null;
}
