import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A module specifier (file URL, JSON-quoted) for a file under src/, to use inside a steps script. */
export const srcModule = (file: string): string => JSON.stringify(pathToFileURL(path.join(repoRoot, 'src', file)).href);

/** The loader's own packages, never what phi-rx loads. */
const LOADER_PACKAGES = ['tsx', 'esbuild', 'get-tsconfig', 'resolve-pkg-maps'];

/**
 * Runs `steps` (TypeScript module source; it marks points with `step('name')`) in a fresh Node
 * process whose resolve hook records every package resolved, and returns, per step, the packages
 * loaded before it. The hook and the marks write synchronously to fd 2, so the order is exact.
 */
export async function packagesLoadedBySteps(steps: string): Promise<(step: string) => string[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'phi-rx-loading-'));
  try {
    await writeFile(
      path.join(dir, 'hook.mjs'),
      `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`
import { writeSync } from 'node:fs';
const skip = ${JSON.stringify(LOADER_PACKAGES)};
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const found = /node_modules\\\\/((?:@[^/]+\\\\/)?[^/]+)/.exec(resolved.url);
  if (found && !skip.includes(found[1])) writeSync(2, 'package ' + found[1] + '\\\\n');
  return resolved;
}\`));
`,
    );
    await writeFile(path.join(dir, 'steps.mts'), `import { writeSync } from 'node:fs';\nconst step = (name: string) => writeSync(2, 'step ' + name + '\\n');\n${steps}`);
    const { stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--import', path.join(dir, 'hook.mjs'), path.join(dir, 'steps.mts')], { cwd: repoRoot });
    const lines = stderr.split('\n');
    return (step) => {
      const at = lines.indexOf(`step ${step}`);
      if (at < 0) throw new Error(`the steps script never reached step "${step}":\n${stderr}`);
      return lines.slice(0, at).filter((l) => l.startsWith('package ')).map((l) => l.slice(8));
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
