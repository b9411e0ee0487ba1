import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as {
  exports: Record<string, { import: string }>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};

/** Resolves `phi-rx` and `phi-rx/<subpath>` through package.json's `exports`, to the TypeScript sources. */
const phiRxFromSources: Plugin = {
  name: 'phi-rx-sources',
  setup(b) {
    b.onResolve({ filter: /^phi-rx(\/.*)?$/ }, (args) => {
      const key = args.path === 'phi-rx' ? '.' : `.${args.path.slice('phi-rx'.length)}`;
      const target = pkg.exports[key]?.import;
      if (!target) return { errors: [{ text: `package.json exports has no "${key}"` }] };
      return { path: `${root}${target.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')}` };
    });
  },
};

/** The optional peers, absent as in a user's project that did not install them (they are dev dependencies here). */
const OPTIONAL_PEERS = Object.keys(pkg.peerDependenciesMeta).filter((name) => pkg.peerDependenciesMeta[name]!.optional);
const withoutOptionalPeers: Plugin = {
  name: 'without-optional-peers',
  setup(b) {
    b.onResolve({ filter: /^[@a-z]/ }, (args) => {
      const peer = OPTIONAL_PEERS.find((name) => args.path === name || args.path.startsWith(`${name}/`));
      return peer ? { errors: [{ text: `Could not resolve "${args.path}" (the optional peer ${peer} is not installed)` }] } : undefined;
    });
  },
};

const nodeBuiltins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

async function bundleForBrowser(specifier: string) {
  const result = await build({
    stdin: { contents: `export * from '${specifier}';`, resolveDir: root, loader: 'ts' },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [phiRxFromSources, withoutOptionalPeers],
  }).catch((e: { errors?: { text: string; location?: { file: string } | null }[] }) => {
    const lines = (e.errors ?? []).map((x) => `${x.location?.file ?? '?'}: ${x.text}`);
    throw new Error(`${specifier} does not bundle for the browser:\n${lines.join('\n')}`);
  });
  return result;
}

describe('browser bundles (esbuild, platform browser)', () => {
  for (const specifier of ['phi-rx', 'phi-rx/testing', 'phi-rx/providers', 'phi-rx/transport', 'phi-rx/ag-ui', 'phi-rx/ai-sdk']) {
    it(`${specifier} bundles with no Node built-in and no unresolved import, without the optional peers`, async () => {
      const result = await bundleForBrowser(specifier);
      const imports = Object.values(result.metafile.inputs).flatMap((input) => input.imports.map((i) => i.path));
      expect(imports.filter((p) => nodeBuiltins.has(p))).toEqual([]);
      const inputs = Object.keys(result.metafile.inputs);
      expect(inputs.filter((p) => /node_modules\/(undici|@modelcontextprotocol|@apidevtools)\//.test(p))).toEqual([]);
      expect(result.outputFiles[0]!.text.length).toBeGreaterThan(1000);
    }, 60_000);
  }

  it('fails, naming the module, when a bundle reaches a Node built-in', async () => {
    await expect(bundleForBrowser('phi-rx/node')).rejects.toThrow(/node:child_process/);
  }, 60_000);
});
