/**
 * examples/README.md says any example can be copied into a project and run alone. Tested as a user
 * would: the package packed and installed into an empty project with the peers the examples use
 * (zod, the MCP SDK and its reference server, swagger-parser, OpenTelemetry), then each example copied
 * ALONE into a folder of its own in that project (a relative import of another example fails there)
 * and run with tsx and no API key: it exits 0 and prints what it printed in the repository.
 * One tarball and one project are shared by all the examples.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { consumerProject, packWithoutTypes, repoRoot } from '../package/packed.js';
import { EXPECTED, KEYS } from './expected.js';

const run = promisify(execFile);
/** What the examples import besides phi-rx and rxjs: installed next to the tarball, as a user would. */
const PEERS = ['zod', '@modelcontextprotocol/sdk', '@modelcontextprotocol/server-everything', '@apidevtools/swagger-parser', '@opentelemetry/api', '@opentelemetry/sdk-trace-base', '@ag-ui/client', '@ag-ui/encoder', '@a2a-js/sdk', 'express'];
/** tsx, from this repository: the project does not need it installed to run a file with it. */
const TSX = pathToFileURL(createRequire(path.join(repoRoot, 'package.json')).resolve('tsx')).href;
const CONCURRENCY = 3;

const examples = (await readdir(path.join(repoRoot, 'examples'))).filter((f) => f.endsWith('.ts')).sort();
let work: string;
let project: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'phi-rx-examples-'));
  project = await consumerProject(path.join(work, 'project'), await packWithoutTypes(work), PEERS);
}, 300_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** Copies `file` alone into `project/<name>/` and runs it there with tsx, no API key in the environment. */
async function runAlone(file: string): Promise<{ file: string; stdout: string; error?: string }> {
  const dir = path.join(project, file.replace(/\.ts$/, ''));
  await mkdir(dir);
  await copyFile(path.join(repoRoot, 'examples', file), path.join(dir, file));
  const env = { ...process.env };
  for (const name of KEYS) delete env[name];
  try {
    const { stdout } = await run(process.execPath, ['--import', TSX, file], { cwd: dir, env, timeout: 60_000 });
    return { file, stdout };
  } catch (e) {
    const failure = e as { stdout?: string; stderr?: string; message: string };
    return { file, stdout: failure.stdout ?? '', error: `${failure.message}\n${failure.stderr ?? ''}` };
  }
}

/** At most {@link CONCURRENCY} examples run at once (the tests start together). */
let running = 0;
const waiting: Array<() => void> = [];
async function limited<T>(task: () => Promise<T>): Promise<T> {
  if (running >= CONCURRENCY) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await task();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

describe('every example, copied alone into a project with the packed tarball installed', () => {
  it.concurrent.each(examples)('%s runs with no API key, exits 0 and prints what it does', async (file) => {
    const result = await limited(() => runAlone(file));
    expect(result.error).toBeUndefined();
    expect(result.stdout).toMatch(EXPECTED[file]!);
  }, 180_000);
});
