// `npm run build`: dist/ as published.
//
//   node scripts/build.mjs [--metafile <file>] [--outdir <dir> --no-types]
//
// `--outdir` writes the JavaScript elsewhere than dist/ (the bundle test packs a copy of the package
// without touching the repository's dist/, which the consumer test builds at the same time);
// `--no-types` skips tsc's declarations (bundlers do not read them).
//
// The JavaScript is an esbuild bundle: ES modules with code splitting, one entry per `exports`
// subpath of package.json (and the `phi-rx` command), at the path `exports` names, so that Node
// loads a handful of files instead of one per source module. Every dependency and peer stays an
// import (`packages: 'external'`: an app keeps one rxjs, and optional peers stay optional). Code
// shared by several entries goes to dist/chunks/; code reached by one entry stays in its file, so a
// Node-only subpath's code (and its Node built-ins) lands only in chunks that subpath reaches.
// The types are tsc's (`tsconfig.build.json`, declarations only), at the same paths.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const argv = process.argv.slice(2);
const option = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const metafileOut = option('--metafile');
const outdir = path.resolve(root, option('--outdir') ?? 'dist');
const types = !argv.includes('--no-types');
if (!types && outdir === path.join(root, 'dist')) throw new Error('--no-types needs --outdir: dist/ is published with its types');

/** `./dist/a/b.js` → { in: `src/a/b.ts`, out: `a/b` }: a published file and the source it is built from. */
function entryFor(published, where) {
  const match = /^\.\/dist\/(.+)\.js$/.exec(published ?? '');
  if (!match) throw new Error(`package.json ${where}: expected a ./dist/….js file, got ${JSON.stringify(published)}`);
  return { in: path.join(root, 'src', `${match[1]}.ts`), out: match[1] };
}

export function entryPoints() {
  const entries = Object.entries(pkg.exports)
    .filter(([subpath]) => subpath !== './package.json')
    .map(([subpath, target]) => {
      const entry = entryFor(target.import, `exports["${subpath}"].import`);
      const source = target['phi-rx-source'] && path.join(root, target['phi-rx-source']);
      if (source !== entry.in) throw new Error(`package.json exports["${subpath}"]: "phi-rx-source" is ${target['phi-rx-source']}, expected src/${entry.out}.ts`);
      return entry;
    });
  const bins = Object.entries(pkg.bin ?? {}).map(([name, file]) => entryFor(file, `bin["${name}"]`));
  return [...entries, ...bins];
}

rmSync(outdir, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: entryPoints(),
  outdir,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: ['node20', 'es2022'],
  packages: 'external',
  sourcemap: true,
  sourcesContent: true,
  metafile: metafileOut !== undefined,
  logLevel: 'warning',
});
if (metafileOut) writeFileSync(metafileOut, JSON.stringify(result.metafile));

if (types) {
  const outDir = outdir === path.join(root, 'dist') ? [] : ['--outDir', outdir];
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', ...outDir], { cwd: root, stdio: 'inherit' });
}
