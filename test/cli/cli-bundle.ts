import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
  exports: Record<string, string | Record<string, string>>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
};

/** The packages phi-rx depends on (and the dev ones the tests bring): left as imports, as in the published dist/. */
function packages(): string[] {
  return Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies, ...pkg.devDependencies }).flatMap((name) => [name, `${name}/*`]);
}

/** One entry per `exports` subpath, named as dist/ names it (`mcp/index`): the CLI loads some subpaths by their path. */
function entryPoints(): Record<string, string> {
  const entries: Record<string, string> = { 'cli/main': path.join(repoRoot, 'src/cli/main.ts') };
  for (const target of Object.values(pkg.exports)) {
    if (typeof target !== 'object' || !target['phi-rx-source'] || !target['import']) continue;
    entries[target['import'].replace(/^\.\/dist\//, '').replace(/\.js$/, '')] = path.join(repoRoot, target['phi-rx-source']);
  }
  return entries;
}

let built: Promise<string> | undefined;

/**
 * src/cli/main.ts as one JavaScript file, built once per test process (esbuild, as scripts/build.mjs builds the
 * published CLI): each CLI process the tests start then loads one file instead of tsx compiling src/ module by module,
 * which cost seconds per start on a busy 2-core machine. Returns the file's path.
 */
export function cliBundle(): Promise<string> {
  built ??= (async () => {
    const outdir = path.join(repoRoot, '.tmp/cli-bundle', String(process.pid));
    await build({
      entryPoints: entryPoints(),
      outdir,
      bundle: true,
      splitting: true,
      chunkNames: 'chunks/[name]-[hash]', // as dist/: `../mcp/index.js` from a chunk is the mcp entry
      format: 'esm',
      platform: 'node',
      target: 'node20',
      external: packages(),
      sourcemap: 'inline',
      logLevel: 'silent',
    });
    return path.join(outdir, 'cli/main.js');
  })();
  return built;
}
