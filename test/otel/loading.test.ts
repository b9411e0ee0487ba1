import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'phi-rx-otel-'));
  // A resolve hook lists every package a step loads. It runs on the loaders' thread: it writes to
  // fd 2 synchronously, so each line is out before the import it resolves goes on.
  await writeFile(
    path.join(dir, 'hook.mjs'),
    `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`
import { writeSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const found = /node_modules\\\\/((?:@[^/]+\\\\/)?[^/]+)/.exec(resolved.url);
  if (found) writeSync(2, 'package ' + found[1] + '\\\\n');
  return resolved;
}\`));
`,
  );
  const src = (file: string): string => JSON.stringify(pathToFileURL(path.join(repoRoot, 'src', file)).href);
  await writeFile(
    path.join(dir, 'steps.mts'),
    `import { writeSync } from 'node:fs';
const phi = await import(${src('index.ts')});
new phi.BasicAgent({ model: phi.anthropic('claude-sonnet-4') });
writeSync(2, 'step root\\n');
await import(${src('otel/index.ts')});
writeSync(2, 'step otel\\n');
`,
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('import "phi-rx" never loads @opentelemetry/api; "phi-rx/otel" does', async () => {
  const { stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--import', path.join(dir, 'hook.mjs'), path.join(dir, 'steps.mts')], { cwd: repoRoot });
  const lines = stderr.split('\n');
  const loadedBefore = (step: string): string[] => lines.slice(0, lines.indexOf(`step ${step}`)).filter((l) => l.startsWith('package ')).map((l) => l.slice(8));
  expect(lines).toContain('step otel');
  expect(loadedBefore('root')).toContain('rxjs');
  expect(loadedBefore('root')).not.toContain('@opentelemetry/api');
  expect(loadedBefore('otel')).toContain('@opentelemetry/api');
}, 30_000);
