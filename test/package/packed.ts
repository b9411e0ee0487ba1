/**
 * The package as a user installs it, for the tests that bundle it and run the examples from it:
 * `scripts/build.mjs` writes the JavaScript into a staging copy of the package (not the
 * repository's dist/, which test/package/consumer.test.ts rebuilds at the same time), `npm pack`
 * packs it, and {@link consumerProject} installs the tarball into an empty project: phi-rx's own
 * dependencies and rxjs, no dev dependency, and only the optional peers a test names (from the
 * npm cache when it has them: `--prefer-offline`).
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface PackageJson {
  version: string;
  exports: Record<string, { import?: string }>;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}
export const pkg = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as PackageJson;

export const npm = (args: string[], cwd: string) => run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, timeout: 240_000 });

/** Builds the package's JavaScript (no .d.ts) into `work/package` and packs it there; returns the tarball's path. */
export async function packWithoutTypes(work: string): Promise<string> {
  const staging = path.join(work, 'package');
  await mkdir(staging, { recursive: true });
  await run(process.execPath, [path.join(repoRoot, 'scripts/build.mjs'), '--outdir', path.join(staging, 'dist'), '--no-types'], { cwd: repoRoot, timeout: 120_000 });
  for (const file of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE']) await copyFile(path.join(repoRoot, file), path.join(staging, file));
  const { stdout } = await npm(['pack', '--json', '--pack-destination', work], staging);
  return path.join(work, (JSON.parse(stdout) as Array<{ filename: string }>)[0]!.filename);
}

/**
 * An empty ES-module project at `dir` with the tarball installed, plus `peers` (package names,
 * each at the range phi-rx's package.json gives it: peer range, else dev range).
 */
export async function consumerProject(dir: string, tarball: string, peers: readonly string[] = []): Promise<string> {
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  const specs = peers.map((name) => `${name}@${pkg.peerDependencies[name] ?? pkg.devDependencies[name] ?? 'latest'}`);
  await npm(['install', '--prefer-offline', tarball, ...specs], dir);
  return dir;
}
