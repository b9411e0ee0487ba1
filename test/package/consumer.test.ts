/**
 * The package as a user gets it: `npm run build` (the esbuild bundle and tsc's .d.ts files), `npm
 * pack`, the tarball installed into an empty project (no devDependencies, no optional peers: rxjs is
 * the one peer npm installs), every subpath imported as ESM and required from CommonJS, the
 * browser-safe entries checked to load no Node built-in and no Node-only code from the bundle's
 * chunks, and a consumer file type-checked under --strict against the shipped .d.ts files (with zod,
 * which the user installs for their own schemas; the MCP SDK not installed: phi-rx's types spell out
 * the few MCP shapes they mention).
 * Needs the npm registry (or a warm npm cache) for phi-rx's own dependencies and zod.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pkg = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as {
  exports: Record<string, { import?: string }>;
  version: string;
  peerDependencies: Record<string, string>;
};
const ALL_SUBPATHS = Object.keys(pkg.exports).filter((s) => s !== './package.json').map((s) => (s === '.' ? 'phi-rx' : `phi-rx/${s.slice(2)}`));
/** Subpaths that are bindings to an optional peer and import it at load: without the peer they cannot load. */
const NEEDS_PEER_AT_IMPORT: Record<string, string> = { 'phi-rx/otel': '@opentelemetry/api' };
const SUBPATHS = ALL_SUBPATHS.filter((s) => !(s in NEEDS_PEER_AT_IMPORT));
/** The core install's ceiling (issue 14): phi-rx and what npm brings with it into an empty project. */
const MAX_CORE_PACKAGES = 10;
/** The entries that must run in a browser: they load no Node built-in (README, "Runs anywhere JavaScript runs"). */
const BROWSER_SAFE = ['phi-rx', 'phi-rx/testing', 'phi-rx/providers', 'phi-rx/transport', 'phi-rx/ai-sdk'];
/** The Node-only subpaths, whose code must stay out of what the browser-safe entries load. */
const NODE_ONLY = ['phi-rx/node', 'phi-rx/transport/node', 'phi-rx/postgres', 'phi-rx/redis', 'phi-rx/mcp', 'phi-rx/openapi', 'phi-rx/config', 'phi-rx/otel', 'phi-rx/a2a', 'phi-rx/ai-sdk/node'];

let work: string;
let app: string;
let tarball: string;

const npm = (args: string[], cwd: string) => run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, timeout: 180_000 });
const nodeIn = (cwd: string, args: string[]) => run(process.execPath, args, { cwd, timeout: 60_000 });

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'phi-rx-consumer-'));
  app = path.join(work, 'app');
  // The package as published: built by `npm run build` into dist/, packed by npm.
  await run(process.execPath, [path.join(repoRoot, 'scripts/build.mjs')], { cwd: repoRoot, timeout: 240_000 });
  const { stdout } = await npm(['pack', '--json', '--pack-destination', work], repoRoot);
  tarball = path.join(work, (JSON.parse(stdout) as Array<{ filename: string }>)[0]!.filename);
  await run('mkdir', ['-p', app]);
  await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await npm(['install', tarball], app);
}, 300_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** Every package directory under node_modules (scoped ones included), the app's own excluded. */
async function installedPackages(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (modules: string): Promise<void> => {
    const entries = await readdir(modules, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const full = path.join(modules, entry.name);
      if (entry.name.startsWith('@')) {
        for (const scoped of await readdir(full)) {
          out.push(`${entry.name}/${scoped}`);
          await walk(path.join(full, scoped, 'node_modules'));
        }
      } else {
        out.push(entry.name);
        await walk(path.join(full, 'node_modules'));
      }
    }
  };
  await walk(path.join(dir, 'node_modules'));
  return out.sort();
}

describe('the packed package in an empty project', () => {
  it(`ships dist, README, CHANGELOG and LICENSE only, and installs at most ${MAX_CORE_PACKAGES} packages`, async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout.trim().split('\n').map((f) => f.replace(/^package\//, ''));
    expect(files.filter((f) => !f.startsWith('dist/')).sort()).toEqual(['CHANGELOG.md', 'LICENSE', 'README.md', 'package.json']);
    expect(files.some((f) => f.startsWith('src/') || f.startsWith('test/'))).toBe(false);
    const maps = files.filter((f) => f.endsWith('.js.map'));
    expect(maps.length).toBeGreaterThan(0);
    // Every map carries the sources it names (src/ is not shipped); a chunk that only re-exports names none.
    let sources = 0;
    for (const file of maps) {
      const map = JSON.parse(await readFile(path.join(app, 'node_modules/phi-rx', file), 'utf8')) as { sources: string[]; sourcesContent?: string[] };
      expect(map.sourcesContent?.length ?? 0, file).toBe(map.sources.length);
      expect(map.sourcesContent?.filter((c) => !c), file).toEqual([]);
      sources += map.sources.length;
    }
    expect(sources).toBeGreaterThan(50);

    const installed = await installedPackages(app);
    expect(installed).toContain('phi-rx');
    expect(installed).toContain('rxjs');
    expect(installed, 'zod is an optional peer: the user installs it for their own schemas').not.toContain('zod');
    expect(installed).not.toContain('@modelcontextprotocol/sdk');
    expect(installed).not.toContain('@apidevtools/swagger-parser');
    expect(installed.length, installed.join(', ')).toBeLessThanOrEqual(MAX_CORE_PACKAGES);
  });

  it('imports every subpath as ESM', async () => {
    const script = `for (const s of ${JSON.stringify(SUBPATHS)}) { const m = await import(s); console.log(s, Object.keys(m).length); }`;
    const { stdout } = await nodeIn(app, ['--input-type=module', '-e', script]);
    const counts = Object.fromEntries(stdout.trim().split('\n').map((line) => line.split(' ')));
    expect(Object.keys(counts)).toEqual(SUBPATHS);
    for (const s of SUBPATHS) expect(Number(counts[s]), s).toBeGreaterThan(0);
  });

  it('require() from CommonJS gets the same API (Node >= 20.19 loads ES modules synchronously)', async () => {
    const script = `for (const s of ${JSON.stringify(SUBPATHS)}) console.log(s, typeof require(s));
      const { agentLoop, BasicAgent } = require('phi-rx'); console.log(typeof agentLoop, typeof BasicAgent);`;
    const { stdout } = await nodeIn(app, ['--no-warnings', '-e', script]);
    expect(stdout).toContain('phi-rx object');
    expect(stdout).toContain('phi-rx/mcp object');
    expect(stdout.trim().split('\n').at(-1)).toBe('function function');
  });

  it('a subpath that binds an optional peer fails to import without it, naming the package', async () => {
    expect(Object.keys(NEEDS_PEER_AT_IMPORT).every((s) => ALL_SUBPATHS.includes(s))).toBe(true);
    for (const [subpath, peer] of Object.entries(NEEDS_PEER_AT_IMPORT)) {
      const script = `try { await import(${JSON.stringify(subpath)}); console.log('loaded'); } catch (e) { console.log(e.message); }`;
      const { stdout } = await nodeIn(app, ['--input-type=module', '-e', script]);
      expect(stdout).toContain(`Cannot find package '${peer}'`);
    }
  });

  /** What trying MCP and then OpenAPI prints without their optional peers installed. */
  const MISSING_MCP_AND_OPENAPI = [
    'MissingPeerDependencyError: phi-rx/mcp needs the package @modelcontextprotocol/sdk, which is not installed. Install it with: npm install @modelcontextprotocol/sdk',
    'MissingPeerDependencyError: phi-rx/openapi needs the package @apidevtools/swagger-parser, which is not installed. Install it with: npm install @apidevtools/swagger-parser',
  ];

  it('without the optional peers, phi-rx/mcp and phi-rx/openapi reject naming the package to install', async () => {
    const script = `
      import { connectMcpStdio } from 'phi-rx/mcp';
      import { openApiToolsFromSpec } from 'phi-rx/openapi';
      for (const attempt of [() => connectMcpStdio({ command: 'unused' }), () => openApiToolsFromSpec({ openapi: '3.0.0', info: { title: 't', version: '1' }, paths: {} })]) {
        try { await attempt(); console.log('resolved'); } catch (e) { console.log(e.name + ': ' + e.message); }
      }`;
    const { stdout } = await nodeIn(app, ['--input-type=module', '-e', script]);
    expect(stdout.trim().split('\n')).toEqual(MISSING_MCP_AND_OPENAPI);
  });

  it('without @a2a-js/sdk, phi-rx/a2a imports and its first call rejects naming the package', async () => {
    const script = `
      import { a2aServer, a2aAgentTool } from 'phi-rx/a2a';
      import { scriptedModel } from 'phi-rx/testing';
      for (const attempt of [() => a2aServer({ model: scriptedModel() }, { card: { name: 'n', description: 'd' }, authorize: 'allow-all' }), () => a2aAgentTool('http://127.0.0.1:9')]) {
        try { await attempt(); console.log('resolved'); } catch (e) { console.log(e.name + ': ' + e.message); }
      }`;
    const { stdout } = await nodeIn(app, ['--input-type=module', '-e', script]);
    expect(stdout.trim().split('\n')).toEqual([
      'MissingPeerDependencyError: phi-rx/a2a needs the package @a2a-js/sdk, which is not installed. Install it with: npm install @a2a-js/sdk',
      'MissingPeerDependencyError: phi-rx/a2a (a2aAgentTool) needs the package @a2a-js/sdk, which is not installed. Install it with: npm install @a2a-js/sdk',
    ]);
  });

  it('every subpath has its types at the path `exports` names', async () => {
    const missing: string[] = [];
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (subpath === './package.json') continue;
      const types = (target as { types?: string }).types;
      const found = types && (await readFile(path.join(app, 'node_modules/phi-rx', types), 'utf8').catch(() => undefined));
      if (!found?.includes('export')) missing.push(`${subpath}: ${types}`);
    }
    expect(missing).toEqual([]);
  });

  it('the browser-safe entries load no Node built-in and none of the Node-only subpaths\' code', async () => {
    // A resolve hook records every module the import resolves: Node built-ins and phi-rx's own files.
    const hook = `import { writeSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.url.startsWith('node:') || resolved.url.includes('/node_modules/phi-rx/')) writeSync(1, resolved.url + '\\n');
  return resolved;
}`;
    await writeFile(path.join(app, 'record-loads.mjs'), `import { register } from 'node:module';\nregister(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});\n`);
    const loads = async (specifier: string) => {
      const { stdout } = await nodeIn(app, ['--import', './record-loads.mjs', '--input-type=module', '-e', `await import(${JSON.stringify(specifier)});`]);
      const urls = [...new Set(stdout.trim().split('\n'))];
      return {
        builtins: urls.filter((u) => u.startsWith('node:')),
        files: urls.filter((u) => u.includes('/node_modules/phi-rx/')).map((u) => u.slice(u.indexOf('/node_modules/phi-rx/') + '/node_modules/phi-rx/'.length)),
      };
    };
    const nodeOnlyFiles = NODE_ONLY.map((s) => pkg.exports[`./${s.slice('phi-rx/'.length)}`]!.import!.slice(2));
    for (const specifier of BROWSER_SAFE) {
      const { builtins, files } = await loads(specifier);
      expect(builtins, `Node built-ins loaded by import '${specifier}'`).toEqual([]);
      expect(files.filter((f) => nodeOnlyFiles.includes(f)), specifier).toEqual([]);
      expect(files.every((f) => f.startsWith('dist/')), files.join(', ')).toBe(true);
      // A bundle: chunks, not one file per source module (the root was 95 files before). esbuild makes one chunk per
      // set of entries sharing code, so the count grows with the subpaths (21 now, with AG-UI, AI SDK UI and A2A): 23.
      expect(files.length, `files loaded by import '${specifier}': ${files.join(', ')}`).toBeLessThanOrEqual(30);
    }
    // The hook sees built-ins when they are loaded: a Node-only subpath's are reported.
    expect((await loads('phi-rx/node')).builtins).toContain('node:child_process');
    expect((await loads('phi-rx/session')).builtins).toContain('node:fs/promises');
  }, 120_000);

  it("BasicAgent's MCP and OpenAPI methods load their subpath's code from the bundle, and name the missing peer", async () => {
    const script = `
      import { BasicAgent } from 'phi-rx';
      import { scriptedModel, scriptedProvider } from 'phi-rx/testing';
      const agent = new BasicAgent({ model: scriptedModel(), provider: scriptedProvider([]) });
      const spec = { openapi: '3.0.0', info: { title: 't', version: '1' }, paths: {} };
      for (const attempt of [() => agent.withMcpServerStdio({ command: 'unused' }), () => agent.withOpenApiSpec(spec)]) {
        try { await attempt(); console.log('resolved'); } catch (e) { console.log(e.name + ': ' + e.message); }
      }`;
    const { stdout } = await nodeIn(app, ['--input-type=module', '-e', script]);
    expect(stdout.trim().split('\n')).toEqual(MISSING_MCP_AND_OPENAPI);
  });

  it('a consumer file type-checks under --strict against the shipped types', async () => {
    // zod is the user's own: installed as a user would, for the tool schema in the consumer file.
    await npm(['install', '--prefer-offline', `zod@${pkg.peerDependencies['zod']}`], app);
    await writeFile(path.join(app, 'consumer.ts'), CONSUMER);
    // A second file with one type error, checked in the same run: proof that the check is real.
    await writeFile(path.join(app, 'broken.ts'), `import { BasicAgent } from 'phi-rx';\ndeclare const agent: BasicAgent;\nexport const wrong: number = await agent.run('x');\n`);
    await writeFile(path.join(app, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        strict: true, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023', 'DOM'],
        skipLibCheck: false, types: ['node'], typeRoots: [path.join(repoRoot, 'node_modules/@types')],
      },
      files: ['consumer.ts', 'broken.ts'],
    }));
    const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc');
    const output = await nodeIn(app, [tsc, '-p', 'tsconfig.json']).then(() => '', (e: { stdout: string }) => e.stdout);
    expect(output.trim().split('\n')).toEqual([
      expect.stringMatching(/^broken\.ts\(3,14\): error TS2322: Type 'string' is not assignable to type 'number'\.$/),
    ]);
  }, 240_000);
});

const CONSUMER = `
import { BasicAgent, anthropic, defineTool, runToEnd, textStream, type AgentEndEvent, type AnthropicModelId } from 'phi-rx';
import { scriptedModel, scriptedProvider } from 'phi-rx/testing';
import { ProviderRegistry as Registry } from 'phi-rx/providers';
import { SessionRecorder } from 'phi-rx/session';
import { defaultTools } from 'phi-rx/tools';
import { connectMcpStdio, type McpConnection, type McpToolInfo } from 'phi-rx/mcp';
import { OpenApiAuth, type OpenApiTools } from 'phi-rx/openapi';
import { z } from 'zod';

const id: AnthropicModelId = 'claude-sonnet-4-5';
const model = anthropic(id, { maxTokens: 1024 });
const add = defineTool({
  name: 'add',
  description: 'Adds two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
});
const agent = new BasicAgent({ model: scriptedModel(), provider: scriptedProvider([{ text: 'hi' }]) }).withTools(add);
const text: string = await agent.run('hello');
for await (const chunk of agent.textStream('again')) console.log(chunk.toUpperCase());
for await (const chunk of textStream(agent.prompt('once more'))) console.log(chunk.length);
const end: AgentEndEvent = await runToEnd(agent.prompt('end'));
const connect = (command: string): Promise<McpConnection> => connectMcpStdio({ command });
const describeTool = (info: McpToolInfo): string => info.title ?? info.name;
const loaded: OpenApiTools | undefined = undefined;
console.log(text, end.stopReason, model.id, typeof Registry, new SessionRecorder(), defaultTools, connect, loaded, OpenApiAuth, describeTool);
`;
