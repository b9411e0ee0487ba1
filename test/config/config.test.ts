import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentConfigError, createAgentFromConfig, loadAgentConfig } from '../../src/config/index.js';
import { FileSessionStore, recordSession, SessionRecorder } from '../../src/session/index.js';
import { scriptedProvider } from '../../src/testing/index.js';
import { ProviderError } from '../../src/types/errors.js';
import type { AgentEvent } from '../../src/index.js';
import { addTool } from '../agent/helpers.js';
import { repoRoot, testServer } from '../integrations/mcp/helpers.js';
import { fixture, openApiFixturesMissing } from '../integrations/openapi/fixtures.js';
import { skipGroup } from '../support/skip.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'phi-rx-config-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, text: string): Promise<string> {
  const at = path.join(dir, name);
  await writeFile(at, text);
  return at;
}

async function failure(promise: Promise<unknown>): Promise<AgentConfigError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(AgentConfigError);
  return error as AgentConfigError;
}

const TOML = `name = "helper"
systemPrompt = "Be brief."
tools = ["add", "read_file"]
steeringPolicy = "interrupt"
temperature = 0.5

[model]
provider = "anthropic"
id = "claude-sonnet-4-5"
apiKey = "\${TEST_ANTHROPIC_KEY}"

[limits]
maxTurns = 4

[retry]
maxRetries = 1
initialDelayMs = 10

[compaction]
maxContextTokens = 50000
`;

const YAML = `name: helper
systemPrompt: Be brief.
tools: [add, read_file]
steeringPolicy: interrupt
temperature: 0.5
model:
  provider: anthropic
  id: claude-sonnet-4-5
  apiKey: \${TEST_ANTHROPIC_KEY}
limits:
  maxTurns: 4
retry:
  maxRetries: 1
  initialDelayMs: 10
compaction:
  maxContextTokens: 50000
`;

const JSON_TEXT = JSON.stringify(
  {
    name: 'helper', systemPrompt: 'Be brief.', tools: ['add', 'read_file'], steeringPolicy: 'interrupt', temperature: 0.5,
    model: { provider: 'anthropic', id: 'claude-sonnet-4-5', apiKey: '${TEST_ANTHROPIC_KEY}' },
    limits: { maxTurns: 4 }, retry: { maxRetries: 1, initialDelayMs: 10 }, compaction: { maxContextTokens: 50000 },
  },
  null,
  2,
);

const env = { TEST_ANTHROPIC_KEY: 'sk-ant-secret-0123456789' };

describe('loadAgentConfig', () => {
  it('reads the same agent from TOML, YAML and JSON, with ${ENV} resolved', async () => {
    const loaded = await Promise.all([
      loadAgentConfig(await file('a.toml', TOML), { env }),
      loadAgentConfig(await file('a.yaml', YAML), { env }),
      loadAgentConfig(await file('a.json', JSON_TEXT), { env }),
    ]);
    for (const l of loaded) expect(l.config).toEqual(loaded[0]!.config);
    expect(loaded[0]!.config.model).toEqual({ provider: 'anthropic', id: 'claude-sonnet-4-5', apiKey: env.TEST_ANTHROPIC_KEY });
    expect(loaded[0]!.redact(`key=${env.TEST_ANTHROPIC_KEY}`)).toBe('key=****');
  });

  it('a missing variable names the file, key path, line and variable', async () => {
    const at = await file('missing.toml', TOML);
    const e = await failure(loadAgentConfig(at, { env: {} }));
    expect(e).toMatchObject({ file: at, keyPath: 'model.apiKey', line: 10 });
    expect(e.message).toBe(`${at}:10: model.apiKey: environment variable TEST_ANTHROPIC_KEY is not set`);
  });

  it.each([
    ['toml', TOML.replace('maxTurns = 4', 'maxTurns = 4\nmaxTurnz = 5'), 'limits.maxTurnz', 14],
    ['yaml', YAML.replace('  maxTurns: 4', '  maxTurns: 4\n  maxTurnz: 5'), 'limits.maxTurnz', 12],
    ['json', JSON_TEXT.replace('"maxTurns": 4', '"maxTurns": 4, "maxTurnz": 5'), 'limits.maxTurnz', 16],
  ])('an unknown key in %s names its path and line', async (ext, text, keyPath, line) => {
    const e = await failure(loadAgentConfig(await file(`unknown.${ext}`, text), { env }));
    expect(e).toMatchObject({ keyPath, line, problem: 'unknown key "maxTurnz"' });
  });

  it.each([
    ['toml', TOML.replace('maxTurns = 4', 'maxTurns = "four"'), 13],
    ['yaml', YAML.replace('maxTurns: 4', 'maxTurns: four'), 11],
    ['json', JSON_TEXT.replace('"maxTurns": 4', '"maxTurns": "four"'), 16],
  ])('a wrong type in %s names its path and line', async (ext, text, line) => {
    const e = await failure(loadAgentConfig(await file(`type.${ext}`, text), { env }));
    expect(e).toMatchObject({ keyPath: 'limits.maxTurns', line });
    expect(e.problem).toMatch(/expected number, received string/);
  });

  it('syntax errors carry the parser’s line', async () => {
    expect(await failure(loadAgentConfig(await file('bad.toml', 'name = "x"\nmodel = [\nx\n'), { env }))).toMatchObject({ line: 3, keyPath: '' });
    expect(await failure(loadAgentConfig(await file('bad.yaml', 'name: x\nmodel: {\n'), { env }))).toMatchObject({ line: 3, problem: expect.stringMatching(/^invalid YAML/) });
    expect((await failure(loadAgentConfig(await file('bad.json', '{\n"name": "x",\n}'), { env }))).message).toMatch(/bad\.json.*invalid JSON/);
  });

  it('checks each section: an MCP server with neither command nor url, an out-of-range number, a bad enum, retry = false', async () => {
    const base = '[model]\nprovider = "scripted"\nid = "m"\n';
    expect(await failure(loadAgentConfig(await file('mcp-none.toml', `${base}\n[mcpServers.x]\nprefix = "p"\n`), { env })))
      .toMatchObject({ keyPath: 'mcpServers.x', line: 5, problem: 'Invalid input: expected a server with `command` (stdio) or `url` (HTTP)' });
    expect(await failure(loadAgentConfig(await file('mcp-both.toml', `${base}\n[mcpServers.x]\ncommand = "c"\nurl = "http://h"\n`), { env })))
      .toMatchObject({ keyPath: 'mcpServers.x.url', line: 7, problem: 'unknown key "url"' });
    expect(await failure(loadAgentConfig(await file('jitter.toml', `${base}\n[retry]\njitter = 2\n`), { env })))
      .toMatchObject({ keyPath: 'retry.jitter', line: 6, problem: 'Too big: expected number to be <=1' });
    expect(await failure(loadAgentConfig(await file('provider.toml', base.replace('scripted', 'acme')), { env })))
      .toMatchObject({ keyPath: 'model.provider', line: 2, problem: expect.stringMatching(/^Invalid option: expected one of "anthropic"\|/) });
    expect(await failure(loadAgentConfig(await file('turns.toml', `${base}\n[limits]\nmaxTurns = 1.5\n`), { env })))
      .toMatchObject({ keyPath: 'limits.maxTurns', problem: 'Invalid input: expected int, received number' });
    const { config } = await loadAgentConfig(await file('no-retry.toml', `retry = false\n${base}`), { env });
    expect(config).toEqual({ retry: false, model: { provider: 'scripted', id: 'm' } });
  });

  it('reads fallbackModels, each entry like [model], with ${ENV} resolved; a bad entry names its index, key and line', async () => {
    const toml = `${TOML}\n[[fallbackModels]]\nprovider = "openai"\nid = "gpt-4o"\napiKey = "\${TEST_OPENAI_KEY}"\n\n[[fallbackModels]]\nprovider = "ollama"\nid = "llama3"\n`;
    const yaml = `${YAML}fallbackModels:\n  - provider: openai\n    id: gpt-4o\n    apiKey: \${TEST_OPENAI_KEY}\n  - provider: ollama\n    id: llama3\n`;
    const keys = { ...env, TEST_OPENAI_KEY: 'sk-openai-secret-9876543210' };
    const [fromToml, fromYaml] = await Promise.all([loadAgentConfig(await file('fb.toml', toml), { env: keys }), loadAgentConfig(await file('fb.yaml', yaml), { env: keys })]);
    expect(fromToml.config.fallbackModels).toEqual([{ provider: 'openai', id: 'gpt-4o', apiKey: keys.TEST_OPENAI_KEY }, { provider: 'ollama', id: 'llama3' }]);
    expect(fromYaml.config).toEqual(fromToml.config);
    expect(fromToml.redact(keys.TEST_OPENAI_KEY)).toBe('****');
    const bad = await failure(loadAgentConfig(await file('fb-bad.toml', `${TOML}\n[[fallbackModels]]\nprovider = "openai"\nid = 4\n`), { env }));
    expect(bad).toMatchObject({ keyPath: 'fallbackModels[0].id', line: 24 });
  });

  it('never puts a value from the environment in an error', async () => {
    const secret = 'very-secret-value-42';
    const wrongType = await failure(loadAgentConfig(await file('s1.toml', TOML.replace('maxTurns = 4', 'maxTurns = "${TURNS}"')), { env: { ...env, TURNS: secret } }));
    expect(wrongType.keyPath).toBe('limits.maxTurns');
    const badEnum = await failure(loadAgentConfig(await file('s2.toml', TOML.replace('"interrupt"', '"${POLICY}"')), { env: { ...env, POLICY: secret } }));
    expect(badEnum.keyPath).toBe('steeringPolicy');
    const unknownTool = await failure(createAgentFromConfig(await file('s3.toml', TOML.replace('"read_file"]', '"${TOOL}"]')), { env: { ...env, TOOL: secret }, tools: [addTool] }));
    expect(unknownTool).toMatchObject({ keyPath: 'tools[1]', line: 3 });
    expect(unknownTool.message).toMatch(/unknown tool "\*\*\*\*"/);
    for (const e of [wrongType, badEnum, unknownTool]) {
      expect(e.message).not.toContain(secret);
      expect(JSON.stringify(e)).not.toContain(secret);
    }
  });
});

describe('createAgentFromConfig', () => {
  it('builds the agent the file describes: prompt, tools by name, limits, retry, compaction, steering policy', async () => {
    const provider = scriptedProvider([{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: 'Five.' }]);
    const { agent, name, close } = await createAgentFromConfig(await file('run.toml', TOML), { env, tools: [addTool], provider });
    try {
      expect(name).toBe('helper');
      expect(agent.model).toMatchObject({ provider: 'anthropic', id: 'claude-sonnet-4-5', api: 'anthropic-messages' });
      expect(agent.toolList.map((t) => t.name)).toEqual(['add', 'read_file']);
      expect(agent.loopConfig()).toMatchObject({
        limits: { maxTurns: 4 }, retry: { maxRetries: 1, initialDelayMs: 10 }, contextConfig: { maxContextTokens: 50000 }, steeringPolicy: 'interrupt', temperature: 0.5,
      });
      expect(await agent.run('2+3?')).toBe('Five.');
      expect(provider.requests[0]).toMatchObject({ systemPrompt: 'Be brief.', temperature: 0.5 });
      expect(provider.requests[0]!.tools.map((t) => t.name)).toEqual(['add', 'read_file']);
    } finally {
      await close();
    }
  });

  it('maps fallbackModels to the agent\'s models chain: a turn the primary cannot serve goes to the fallback', async () => {
    const seen: Array<{ url: string; auth: string | undefined; model: unknown }> = [];
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        seen.push({ url: req.url ?? '', auth: req.headers.authorization, model: (JSON.parse(raw) as { model: unknown }).model });
        const chunk = (delta: object, finish: string | null = null): string =>
          `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'llama3', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`${chunk({ role: 'assistant', content: 'from the fallback' })}${chunk({}, 'stop')}data: [DONE]\n\n`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      const toml = `retry = false\n[model]\nprovider = "scripted"\nid = "m"\n\n[[fallbackModels]]\nprovider = "ollama"\nid = "llama3"\nbaseUrl = "${url}"\napiKey = "local-key"\n`;
      const provider = scriptedProvider([{ error: new ProviderError('network', 'primary down') }]);
      const { agent, close } = await createAgentFromConfig(await file('fb-run.toml', toml), { provider });
      try {
        // The fallback comes with its provider: the registry's, wrapped to redact the file's ${ENV} values.
        expect(agent.loopConfig().models).toEqual([agent.model, { model: expect.objectContaining({ provider: 'ollama', id: 'llama3', baseUrl: url, api: 'openai-completions' }), provider: expect.any(Function) }]);
        const all = await lastValueFrom(agent.prompt('hi').pipe(toArray()));
        expect(all.find((e) => e.type === 'ModelFallback')).toMatchObject({ from: { id: 'm' }, to: { provider: 'ollama', id: 'llama3' }, reason: 'retriesExhausted' });
        expect(seen).toEqual([{ url: '/v1/chat/completions', auth: 'Bearer local-key', model: 'llama3' }]);
        expect(agent.messages.at(-1)).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'from the fallback' }] });
      } finally {
        await close();
      }
      const scripted = await failure(createAgentFromConfig(await file('fb-scripted.toml', `${toml}\n[[fallbackModels]]\nprovider = "scripted"\nid = "x"\n`), { provider }));
      expect(scripted).toMatchObject({ keyPath: 'fallbackModels[1].provider' });
      expect(scripted.problem).toMatch(/"scripted" cannot be a fallback/);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('starts the MCP servers it lists (tools prefixed with the server name) and closes them', async () => {
    const toml = `tools = []\n[model]\nprovider = "scripted"\nid = "m"\n\n[mcpServers.local]\ncommand = ${JSON.stringify(process.execPath)}\nargs = ["--import", "tsx", ${JSON.stringify(testServer)}]\ncwd = ${JSON.stringify(repoRoot)}\n`;
    const { agent, close } = await createAgentFromConfig(await file('mcp.toml', toml), { provider: scriptedProvider([]) });
    try {
      expect(agent.toolList.map((t) => t.name)).toContain('local__echo');
    } finally {
      await close();
    }
  }, 30_000);

  it('an MCP server that cannot start is an error naming its key', async () => {
    const toml = `[model]\nprovider = "scripted"\nid = "m"\n\n[mcpServers.broken]\ncommand = "/nonexistent/phi-rx-mcp"\n`;
    const e = await failure(createAgentFromConfig(await file('mcp-bad.toml', toml), { provider: scriptedProvider([]) }));
    expect(e).toMatchObject({ keyPath: 'mcpServers.broken', line: 5 });
  }, 30_000);

  it.skipIf(skipGroup('config: the OpenAPI specs a file lists', openApiFixturesMissing))('adds the operations of the OpenAPI specs it lists, filtered', async () => {
    const spec = fixture('oai__petstore.yaml');
    const yaml = `model: { provider: scripted, id: m }\nopenapi:\n  - spec: ${JSON.stringify(spec)}\n    operationIds: [listPets, showPetById]\n    namePrefix: pets\n    baseUrl: http://127.0.0.1:9/v1\n`;
    const { agent, close } = await createAgentFromConfig(await file('openapi.yaml', yaml), { provider: scriptedProvider([]) });
    await close();
    expect(agent.toolList.map((t) => t.name).sort()).toEqual(['pets__listPets', 'pets__showPetById']);
    const both = yaml.replace('    namePrefix', '    tags: [pets]\n    namePrefix');
    const e = await failure(createAgentFromConfig(await file('openapi-both.yaml', both), { provider: scriptedProvider([]) }));
    expect(e).toMatchObject({ keyPath: 'openapi[0].tags', line: 5, problem: 'give one of operationIds, tags or pathPrefix, not operationIds and tags' });
  });

  describe('secrets from the environment', () => {
    let server: Server;
    let seen: IncomingHttpHeaders | undefined;
    beforeAll(async () => {
      server = createServer((req, res) => {
        seen = req.headers;
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'model not available here' } }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    });
    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    it('reach the provider but never the events or the saved session', async () => {
      const { port } = server.address() as AddressInfo;
      const toml = `retry = false\n[model]\nprovider = "anthropic"\nid = "claude-sonnet-4-5"\napiKey = "\${TEST_ANTHROPIC_KEY}"\nbaseUrl = "http://127.0.0.1:${port}"\n`;
      const { agent, close } = await createAgentFromConfig(await file('secret.toml', toml), { env });
      const recorder = new SessionRecorder();
      const events: AgentEvent[] = await lastValueFrom(agent.prompt('hi').pipe(recordSession(recorder), toArray()));
      await close();
      expect(seen?.['x-api-key']).toBe(env.TEST_ANTHROPIC_KEY);
      expect(events.at(-1)).toMatchObject({ type: 'AgentEnd', stopReason: 'error' });
      const store = new FileSessionStore(path.join(dir, 'sessions'));
      await store.save(recorder.getSession(agent.sessionId)!);
      const saved = await readFile(store.fileOf(agent.sessionId), 'utf8');
      expect(saved).toContain('model not available here');
      expect(saved).not.toContain(env.TEST_ANTHROPIC_KEY);
      expect(JSON.stringify(events)).not.toContain(env.TEST_ANTHROPIC_KEY);
      expect(agent.saveMessages()).not.toContain(env.TEST_ANTHROPIC_KEY);
    });
  });
});
