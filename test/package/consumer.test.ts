/**
 * The package as a user gets it: `npm pack`, the tarball installed into an empty project (no
 * devDependencies, no optional peers), every subpath imported as ESM and required from CommonJS,
 * and a consumer file type-checked under --strict against the shipped .d.ts files (the MCP SDK
 * not installed: phi-rx's types spell out the few MCP shapes they mention).
 * Needs the npm registry (or a warm npm cache) for phi-rx's own dependencies.
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
const pkg = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as { exports: Record<string, unknown>; version: string };
const ALL_SUBPATHS = Object.keys(pkg.exports).filter((s) => s !== './package.json').map((s) => (s === '.' ? 'phi-rx' : `phi-rx/${s.slice(2)}`));
/** Subpaths that are bindings to an optional peer and import it at load: without the peer they cannot load. */
const NEEDS_PEER_AT_IMPORT: Record<string, string> = { 'phi-rx/otel': '@opentelemetry/api' };
const SUBPATHS = ALL_SUBPATHS.filter((s) => !(s in NEEDS_PEER_AT_IMPORT));
/** The core install's ceiling (issue 14): phi-rx and what npm brings with it into an empty project. */
const MAX_CORE_PACKAGES = 10;

let work: string;
let app: string;
let tarball: string;

const npm = (args: string[], cwd: string) => run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, timeout: 180_000 });
const nodeIn = (cwd: string, args: string[]) => run(process.execPath, args, { cwd, timeout: 60_000 });

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'phi-rx-consumer-'));
  app = path.join(work, 'app');
  // The package as published: compiled by the build config into dist/, packed by npm.
  await run(process.execPath, [path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: repoRoot, timeout: 180_000 });
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
    const map = JSON.parse(await readFile(path.join(app, 'node_modules/phi-rx', maps[0]!), 'utf8')) as { sourcesContent?: string[] };
    expect(map.sourcesContent?.[0]?.length).toBeGreaterThan(0);

    const installed = await installedPackages(app);
    expect(installed).toContain('phi-rx');
    expect(installed).toEqual(expect.arrayContaining(['rxjs', 'zod']));
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

  it('without the optional peers, phi-rx/mcp and phi-rx/openapi reject naming the package to install', async () => {
    const script = `
      import { connectMcpStdio } from 'phi-rx/mcp';
      import { openApiToolsFromSpec } from 'phi-rx/openapi';
      for (const attempt of [() => connectMcpStdio({ command: 'unused' }), () => openApiToolsFromSpec({ openapi: '3.0.0', info: { title: 't', version: '1' }, paths: {} })]) {
        try { await attempt(); console.log('resolved'); } catch (e) { console.log(e.name + ': ' + e.message); }
      }`;
    const { stdout } = await nodeIn(app, ['--input-type=module', '-e', script]);
    expect(stdout.trim().split('\n')).toEqual([
      'MissingPeerDependencyError: phi-rx/mcp needs the package @modelcontextprotocol/sdk, which is not installed. Install it with: npm install @modelcontextprotocol/sdk',
      'MissingPeerDependencyError: phi-rx/openapi needs the package @apidevtools/swagger-parser, which is not installed. Install it with: npm install @apidevtools/swagger-parser',
    ]);
  });

  it('a consumer file type-checks under --strict against the shipped types', async () => {
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
   }, 120_000);
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
