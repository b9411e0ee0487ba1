import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const KEYS = ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'PHI_RX_LIVE_MODEL', 'PHI_RX_SCRIPTED', 'PHI_RX_PROVIDER', 'PHI_RX_BASE_URL'];

/** `npm start` as a user runs it: examples/quickstart.ts in its own process. */
function runQuickstart(extraEnv: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of KEYS) delete env[name];
  Object.assign(env, extraEnv);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=phi-rx-source', '--import', 'tsx', 'examples/quickstart.ts'], { cwd: repoRoot, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

describe('examples/quickstart.ts with a real provider that refuses', () => {
  it('a bad key (the API answers 401): prints the API\'s error on stderr and exits 1', async () => {
    const seen: Array<{ url: string | undefined; key: string | undefined }> = [];
    server = createServer((req, res) => {
      seen.push({ url: req.url, key: req.headers['x-api-key'] as string | undefined });
      req.resume();
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }));
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;

    const result = await runQuickstart({ ANTHROPIC_API_KEY: 'sk-ant-wrong', PHI_RX_BASE_URL: `http://127.0.0.1:${port}` });
    expect(seen).toEqual([{ url: '/v1/messages', key: 'sk-ant-wrong' }]);
    expect(result.stdout).toContain('Using anthropic / claude-haiku-4-5');
    expect(result.stderr).toMatch(/^error: .*invalid x-api-key/m);
    expect(result.stderr).not.toContain('sk-ant-wrong');
    expect(result.status).toBe(1);
  });

  it('no key at all: prints which key is missing and exits 1', async () => {
    const result = await runQuickstart({ PHI_RX_PROVIDER: 'anthropic', PHI_RX_BASE_URL: 'http://127.0.0.1:9' });
    expect(result.stderr).toMatch(/^error: .*ANTHROPIC_API_KEY/m);
    expect(result.status).toBe(1);
  });
});
