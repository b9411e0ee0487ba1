/**
 * No secret leaves its place: a key, a custom header and values a config read from `${ENV}` are
 * planted, and a loopback endpoint answers with errors that echo the request (its URL and every
 * header). Every output channel of the run is scanned for them: events$, AgentEnd, the
 * RetryScheduled notice, the saved session, otel spans (in-memory exporter) and the CLI's stdout,
 * stderr and session file, in both its rendered and its --json output.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentFromConfig } from '../../src/config/index.js';
import { FileSessionStore, recordSession, SessionRecorder } from '../../src/session/index.js';
import type { AgentEvent } from '../../src/index.js';
import { otelHarness } from '../integrations/otel/helpers.js';

const SECRETS = {
  apiKey: 'sk-ant-planted-KEY-0123456789abcdef',
  header: 'gw-planted-HEADER-9876543210fedcba',
  envHeader: 'env-planted-TOKEN-13579bdf02468ace',
  envPath: 'env-planted-PATH-a1b2c3d4e5f6',
  envFallbackPath: 'env-planted-FALLBACK-f6e5d4c3b2a1',
};
const planted = Object.values(SECRETS);
const env = { PLANTED_KEY: SECRETS.apiKey, PLANTED_TOKEN: SECRETS.envHeader, PLANTED_PATH: SECRETS.envPath, PLANTED_FALLBACK: SECRETS.envFallbackPath };

/** What a text reveals: each planted secret it contains. */
const leaks = (text: string): string[] => planted.filter((secret) => text.includes(secret));

let server: Server;
let url: string;
let dir: string;

beforeAll(async () => {
  // The model gets 500s (retried, then the fallback model takes over), the fallback model a 400; each echoes the
  // request line and headers.
  server = createServer((req, res) => {
    const echo = `you sent ${req.method} ${req.url} with headers ${JSON.stringify(req.headers)}`;
    const status = req.method === 'POST' && !req.url?.includes('/fallback/') ? 500 : 400;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { type: 'invalid_request_error', message: echo } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = await mkdtemp(path.join(os.tmpdir(), 'phi-rx-secrets-'));
  await writeFile(
    path.join(dir, 'agent.json'),
    JSON.stringify({
      model: { provider: 'anthropic', id: 'claude-sonnet-4-5', apiKey: '${PLANTED_KEY}', baseUrl: `${url}/\${PLANTED_PATH}`, headers: { 'x-gateway-key': SECRETS.header, 'x-env-token': '${PLANTED_TOKEN}' } },
      fallbackModels: [{ provider: 'openai', id: 'gpt-4o-mini', apiKey: '${PLANTED_KEY}', baseUrl: `${url}/fallback/\${PLANTED_FALLBACK}` }],
      retry: { maxRetries: 1, initialDelayMs: 1, maxDelayMs: 1, backoffMultiplier: 1, jitter: 0 },
    }),
  );
});
afterAll(async () => {
  server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('secrets planted in the key, a header and ${ENV}', () => {
  it('the endpoint really echoes them (the test would see a leak)', async () => {
    const response = await fetch(`${url}/${SECRETS.envPath}`, { headers: { 'x-api-key': SECRETS.apiKey } });
    expect(leaks(await response.text())).toEqual([SECRETS.apiKey, SECRETS.envPath]);
    const fallback = await fetch(`${url}/fallback/${SECRETS.envFallbackPath}`, { method: 'POST' });
    expect(fallback.status).toBe(400);
    expect(leaks(await fallback.text())).toEqual([SECRETS.envFallbackPath]);
  });

  it('appear in no event, AgentEnd, saved session or otel span of a config-built agent', async () => {
    const otel = otelHarness();
    const { agent, close } = await createAgentFromConfig(path.join(dir, 'agent.json'), { env, agent: { tracing: otel.tracing } });
    const recorder = new SessionRecorder();
    const fromEvents$: AgentEvent[] = [];
    const subscription = agent.events$.subscribe((e) => fromEvents$.push(e));
    const events = await lastValueFrom(agent.prompt('hello').pipe(recordSession(recorder), toArray()));
    subscription.unsubscribe();
    await close();
    const sessions = path.join(dir, 'sessions-in-process');
    const store = new FileSessionStore(sessions);
    recorder.flush();
    for (const session of recorder.drainCompleted()) await store.save(session);

    const end = events.at(-1);
    expect(end?.type).toBe('AgentEnd');
    expect(events.some((e) => e.type === 'RetryScheduled')).toBe(true);
    expect(events.some((e) => e.type === 'ModelFallback')).toBe(true);
    expect(JSON.stringify(end)).toContain('[REDACTED]'); // the echo came back, redacted
    expect(leaks(JSON.stringify(events))).toEqual([]);
    expect(leaks(JSON.stringify(fromEvents$))).toEqual([]);
    const files = await readdir(sessions);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(leaks(await readFile(path.join(sessions, file), 'utf8'))).toEqual([]);
    const spans = otel.spans();
    expect(spans.length).toBeGreaterThan(0);
    expect(leaks(JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, status: s.status, events: s.events }))))).toEqual([]);
    await otel.shutdown();
  });

  const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const runCli = (args: string[], sessions: string): Promise<{ code: number; out: string }> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', path.join(repoRoot, 'src/cli/main.ts'), ...args],
        { cwd: repoRoot, env: { ...process.env, ...env, PHI_RX_SESSIONS: sessions } },
        (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out: stdout + stderr }),
      );
    });

  for (const json of [false, true]) {
    it(`appear nowhere in the CLI's output${json ? ' with --json' : ''} or the session it saved`, async () => {
      const sessions = path.join(dir, `sessions-cli-${json}`);
      const { code, out } = await runCli(['run', '--config', path.join(dir, 'agent.json'), ...(json ? ['--json'] : []), 'hello'], sessions);
      expect(code).toBe(1);
      expect(out).toContain('[REDACTED]');
      expect(leaks(out)).toEqual([]);
      const files = await readdir(sessions);
      expect(files.length).toBeGreaterThan(0);
      for (const file of files) expect(leaks(await readFile(path.join(sessions, file), 'utf8'))).toEqual([]);
    }, 30_000);
  }
});
