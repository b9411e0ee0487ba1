import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { blocksOf, docFiles, type DocBlock } from './blocks.js';

// Every ```ts block of README.md and docs/*.md, written to .tmp/docs-blocks/ as a program of its own that
// imports `phi-rx` as a user's code does (the package's self-reference, resolved to src/ through the
// `phi-rx-source` condition), type-checked together in one tsc program and, unless marked `// partial` or
// `// no-run: <reason>`, run with no API key: each in its own node process, from one esbuild build of them all
// (phi-rx's sources bundled in, what a user installs left as imports), which starts a process in a fraction of
// the time tsx's loader takes over phi-rx's hundreds of modules. Conventions: test/docs/blocks.ts, docs/testing.md.

const run = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const outDir = path.join(repoRoot, '.tmp/docs-blocks');
const KEYS = ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'AZURE_OPENAI_API_KEY', 'AWS_BEARER_TOKEN_BEDROCK'];
const CONCURRENCY = 3;

const blocks = docFiles(repoRoot).flatMap((doc) => blocksOf(repoRoot, doc));
const runnable = blocks.filter((b) => b.noRun === undefined);

/** What a block must print, beyond exiting 0, by `doc › heading`. */
const EXPECTED: Record<string, (stdout: string) => void> = {
  'README.md › Quickstart': (stdout) => {
    // Each answer once: the quickstart neither subscribes to events$ and iterates textStream at once.
    for (const answer of ['Paris: 18°C', 'Rome: 24°C']) expect(stdout.split(answer).length - 1, `${answer} in:\n${stdout}`).toBe(1);
  },
};

/** The line a block's file starts with before the block's own code: its harness import. */
function prelude(block: DocBlock): string[] {
  return block.harness.length ? [`import { ${block.harness.join(', ')} } from '../../test/docs/harness.js';`] : [];
}

function where(block: DocBlock): string {
  return `${block.doc}:${block.line} (${block.heading}, ${block.file})`;
}

/** The packages a user installs next to phi-rx: left as imports, resolved from node_modules at run time. */
function installedPackages(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
  const names = Object.keys({ ...pkg['dependencies'], ...pkg['peerDependencies'], ...pkg['devDependencies'] });
  return names.flatMap((name) => [name, `${name}/*`]);
}

beforeAll(async () => {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  for (const block of blocks) writeFileSync(path.join(outDir, block.file), [...prelude(block), block.code, ''].join('\n'));
  writeFileSync(
    path.join(outDir, 'tsconfig.json'),
    JSON.stringify({
      extends: '../../tsconfig.json',
      // incremental: a second run on an unchanged tree reads phi-rx's types from the build info (kept beside the folder).
      compilerOptions: { noEmit: true, sourceMap: false, moduleDetection: 'force', rootDir: '../..', incremental: true, tsBuildInfoFile: '../docs-blocks.tsbuildinfo' },
      include: ['*.ts'],
    }),
  );
  await build({
    entryPoints: runnable.map((b) => path.join(outDir, b.file)),
    outdir: path.join(outDir, 'out'),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    conditions: ['phi-rx-source'],
    external: installedPackages(),
    sourcemap: 'inline',
    logLevel: 'silent',
  });
}, 60_000);

let slots = CONCURRENCY;
const waiting: Array<() => void> = [];
async function limited<T>(work: () => Promise<T>): Promise<T> {
  if (slots === 0) await new Promise<void>((resolve) => waiting.push(resolve));
  else slots--;
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else slots++;
  }
}

describe('the code blocks of README.md and docs/', () => {
  it('are found, and every one that is not run says why', () => {
    expect(blocks.length).toBeGreaterThan(20);
    expect(runnable.length).toBeGreaterThan(blocks.length / 2);
    for (const block of blocks) if (block.noRun !== undefined) expect(block.noRun, where(block)).not.toBe('no-run');
  });

  it('type-check as one program', async () => {
    const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc');
    const result = await limited(() => run(process.execPath, [tsc, '-p', path.join(outDir, 'tsconfig.json'), '--pretty', 'false'], { cwd: repoRoot }).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? String(error),
    ));
    // Each error at the doc's own line: `docs/loop.md:12 (…): error TS2304: Cannot find name 'model'.`
    const errors = result
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const m = /docs-blocks\/([^(]+)\((\d+),\d+\): (.*)$/.exec(line);
        const block = m && blocks.find((b) => b.file === m[1]);
        return block ? `${block.doc}:${block.line + Number(m[2]) - 1 - prelude(block).length} (${block.heading}): ${m[3]}` : line;
      });
    expect(errors).toEqual([]);
  }, 120_000);

  it.concurrent.each(runnable.map((b) => [where(b), b] as const))('%s runs with no API key', async (_name, block) => {
    const cwd = path.join(outDir, block.file.replace(/\.ts$/, ''));
    mkdirSync(cwd, { recursive: true });
    const env = { ...process.env };
    for (const key of KEYS) delete env[key];
    const { stdout } = await limited(() =>
      run(process.execPath, ['--enable-source-maps', path.join(outDir, 'out', block.file.replace(/\.ts$/, '.js'))], { cwd, env, timeout: 30_000 }),
    );
    EXPECTED[`${block.doc} › ${block.heading}`]?.(stdout);
  }, 60_000);
});
