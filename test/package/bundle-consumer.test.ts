/**
 * A user's browser app bundles phi-rx: the package packed and installed into an empty project
 * (phi-rx's dependencies and rxjs; no dev dependency, so none of the optional peers that are dev
 * dependencies here), and an app importing every browser-safe entry bundled for the browser with
 * esbuild, Vite (Rollup) and webpack, each run through its Node API: no error, no warning, and
 * no Node built-in in what comes out. The bundlers are the repository's own dev dependencies; they
 * resolve phi-rx and rxjs from the app's node_modules.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build as esbuild } from 'esbuild';
import { build as vite } from 'vite';
import webpack from 'webpack';
import { consumerProject, packWithoutTypes, pkg } from './packed.js';

const run = promisify(execFile);
/** The entries that must bundle for a browser (README: runs anywhere JavaScript runs). */
const BROWSER_SAFE = ['phi-rx', 'phi-rx/testing', 'phi-rx/transport', 'phi-rx/providers', 'phi-rx/ag-ui', 'phi-rx/ai-sdk'];
/** Optional peers that are dev dependencies here: a user's project does not have them. */
const OPTIONAL_PEERS = Object.keys(pkg.peerDependencies).filter((name) => name !== 'rxjs');

/** Every entry in full, as namespaces the app uses: nothing can be tree-shaken away. */
const APP = `${BROWSER_SAFE.map((s, i) => `import * as entry${i} from '${s}';`).join('\n')}
import { BasicAgent, anthropic, transcript } from 'phi-rx';
const agent = new BasicAgent({ model: anthropic('claude-sonnet-4-5') });
transcript(agent.prompt('hi')).subscribe((messages) => console.log(messages.length));
console.log(${BROWSER_SAFE.map((_, i) => `Object.keys(entry${i}).length`).join(', ')});
`;

let work: string;
let app: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'phi-rx-bundle-'));
  app = await consumerProject(path.join(work, 'app'), await packWithoutTypes(work));
  await writeFile(path.join(app, 'main.js'), APP);
}, 300_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

const BUILTINS = builtinModules.filter((m) => !m.startsWith('_'));
/** Imports and requires of a Node built-in (`node:x`, or a bare built-in name) left in bundled code. */
function builtinImports(code: string): string[] {
  const names = BUILTINS.map((m) => m.replace(/[/]/g, '\\/')).join('|');
  const pattern = new RegExp(`(?:\\bfrom\\s*|\\bimport\\s*\\(\\s*|\\brequire\\s*\\(\\s*|\\bimport\\s*)["'\`]((?:node:)?(?:${names}))(?:\\/[^"'\`]*)?["'\`]`, 'g');
  return [...code.matchAll(pattern)].map((m) => m[1]!);
}

async function outputCode(dir: string): Promise<string> {
  const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.js'));
  expect(files.length, `no .js written to ${dir}`).toBeGreaterThan(0);
  return (await Promise.all(files.map((f) => readFile(path.join(dir, f), 'utf8')))).join('\n');
}

/** The names of optional peers the app's project lacks: proof the test bundles as a user does. */
async function presentOptionalPeers(): Promise<string[]> {
  const present = await Promise.all(OPTIONAL_PEERS.map((name) => readFile(path.join(app, 'node_modules', name, 'package.json')).then(() => name, () => undefined)));
  return present.filter((name): name is string => name !== undefined);
}

describe('a browser app bundles phi-rx from the packed tarball, without the dev dependencies', () => {
  it('the project has none of the optional peers', async () => {
    expect(await presentOptionalPeers()).toEqual([]);
  });

  it('esbuild (platform browser, one file and code-split)', async () => {
    for (const splitting of [false, true]) {
      const outdir = path.join(work, `esbuild-${splitting ? 'split' : 'single'}`);
      const result = await esbuild({
        absWorkingDir: app, entryPoints: ['main.js'], outdir, bundle: true, splitting, format: 'esm', platform: 'browser', minify: true, logLevel: 'silent',
      }).catch((e: { errors?: Array<{ text: string; location?: { file: string } | null }> }) => {
        throw new Error(`esbuild failed:\n${(e.errors ?? []).map((x) => `${x.location?.file ?? '?'}: ${x.text}`).join('\n')}`);
      });
      expect(result.warnings.map((w) => w.text)).toEqual([]);
      expect(builtinImports(await outputCode(outdir))).toEqual([]);
    }
  }, 60_000);

  it('Vite (Rollup)', async () => {
    const outDir = path.join(work, 'vite');
    const warnings: string[] = [];
    await vite({
      root: app, configFile: false, logLevel: 'silent', mode: 'production',
      build: {
        outDir, emptyOutDir: true, minify: true, write: true,
        rollupOptions: { input: path.join(app, 'main.js'), onwarn: (warning) => void warnings.push(`${warning.code ?? ''}: ${warning.message}`) },
      },
    });
    expect(warnings).toEqual([]);
    expect(builtinImports(await outputCode(outDir))).toEqual([]);
  }, 120_000);

  it('webpack (target web, production)', async () => {
    const outDir = path.join(work, 'webpack');
    const stats = await new Promise<webpack.Stats>((resolve, reject) =>
      webpack({
        // Production resolution and tree-shaking; not minified (terser is most of webpack's time, and sizes are bundle-size.mjs's job).
        context: app, entry: './main.js', mode: 'production', target: 'web', performance: false, optimization: { minimize: false },
        output: { path: outDir, filename: 'main.js' },
      }, (error, result) => (error || !result ? reject(error ?? new Error('webpack gave no stats')) : resolve(result))),
    );
    const { errors = [], warnings = [] } = stats.toJson({ all: false, errors: true, warnings: true });
    expect(errors.map((e) => `${e.moduleName ?? ''}: ${e.message}`)).toEqual([]);
    expect(warnings.map((w) => `${w.moduleName ?? ''}: ${w.message}`)).toEqual([]);
    expect(builtinImports(await outputCode(outDir))).toEqual([]);
  }, 120_000);

  it('on Node, the same project runs a Bedrock model to an error naming the missing peer and its install command', async () => {
    const script = `import { BasicAgent, bedrock } from 'phi-rx';
      const agent = new BasicAgent({ model: bedrock('anthropic.claude-sonnet-4-5-20250929-v1:0', { apiKey: 'unused', region: 'us-east-1' }) });
      try { console.log('resolved', await agent.run('hi')); } catch (e) { console.log(e.message); }`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: app, timeout: 60_000 });
    expect(stdout.trim()).toBe('The agent run failed: The Bedrock provider needs the package @smithy/eventstream-codec, which is not installed. Install it with: npm install @smithy/eventstream-codec');
  }, 60_000);

  it('the Node built-in check finds one when it is there', () => {
    expect(builtinImports(`import{a}from"node:fs";const b=require('child_process');import("node:fs/promises");import "os";`)).toEqual(['node:fs', 'child_process', 'node:fs', 'os']);
    expect(builtinImports('const s="fs is a word"; fetch("/path")')).toEqual([]);
  });
});
