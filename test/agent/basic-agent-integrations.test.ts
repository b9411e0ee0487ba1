import { afterAll, describe, expect, it } from 'vitest';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom, toArray } from 'rxjs';
import { BasicAgent, Evaluation, runToEnd, textOf, type AgentEvent } from '../../src/index.js';
import { SkillSet } from '../../src/tools/index.js';
import { recordSession, SessionRecorder, sessionQueries } from '../../src/session/index.js';
import { scriptedModel, scriptedProvider } from '../../src/testing/index.js';
import { repoRoot, testServer } from '../integrations/mcp/helpers.js';
import { startPetstore } from '../integrations/openapi/petstore-server.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

describe('BasicAgent integrations', () => {
  it('withSkills appends the <available_skills> index to the system prompt', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'phi-rx-skills-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await mkdir(join(dir, 'pdf'));
    await writeFile(join(dir, 'pdf', 'SKILL.md'), '---\nname: pdf\ndescription: Fill PDF forms\n---\nSteps...');
    const provider = scriptedProvider([{ text: 'ok' }]);
    const agent = new BasicAgent({ model: scriptedModel(), provider, systemPrompt: 'Base.' }).withSkills(await SkillSet.load([dir]));
    await agent.run('hi');
    expect(provider.requests[0]!.systemPrompt).toMatch(/^Base\.\n\n[\s\S]*<available_skills>[\s\S]*<name>pdf<\/name>/);
  });

  it('withMcpServerStdio adds a real MCP server\'s tools, and the agent calls them', async () => {
    const provider = scriptedProvider([{ toolCalls: [{ name: 'test__echo', arguments: { text: 'over MCP' } }] }, { text: 'done' }]);
    const agent = new BasicAgent({ model: scriptedModel(), provider });
    const connection = await agent.withMcpServerStdio({ command: process.execPath, args: ['--import', 'tsx', testServer], cwd: repoRoot }, { prefix: 'test' });
    cleanups.push(() => connection.close());
    expect(agent.toolList.map((t) => t.name)).toContain('test__echo');
    const end = await runToEnd(agent.prompt('echo'));
    const result = end.messages.find((m) => m.role === 'toolResult')!;
    expect(textOf(result as never)).toContain('over MCP');
    expect(result).toMatchObject({ isError: false });
  });

  it('withOpenApiSpec adds one tool per operation, calling a real HTTP server', async () => {
    const server = await startPetstore();
    cleanups.push(() => server.close());
    const spec = {
      openapi: '3.0.0',
      info: { title: 'pets', version: '1' },
      servers: [{ url: `${server.origin}/v1` }],
      paths: { '/pets/{petId}': { get: { operationId: 'showPetById', parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }], responses: { '200': { description: 'ok' } } } } },
    };
    const provider = scriptedProvider([{ toolCalls: [{ name: 'showPetById', arguments: { petId: '1' } }] }, { text: 'Rex' }]);
    const agent = new BasicAgent({ model: scriptedModel(), provider });
    const loaded = await agent.withOpenApiSpec(spec);
    expect(loaded.tools.map((t) => t.name)).toEqual(['showPetById']);
    const end = await runToEnd(agent.prompt('who is pet 1?'));
    expect(textOf(end.messages.find((m) => m.role === 'toolResult') as never)).toMatch(/^GET http:\/\/127\.0\.0\.1:\d+\/v1\/pets\/1 → 200\n\n.*Rex/s);
  });

  it('promptParallel runs branches, continues from the winner, and the recorder marks the group', async () => {
    const recorder = new SessionRecorder();
    const agent = new BasicAgent({ model: scriptedModel(), provider: scriptedProvider([{ text: 'unused' }]) });
    const cheap = scriptedProvider([{ text: 'short', usage: { input: 10, output: 5 } }]);
    const verbose = scriptedProvider([{ text: 'a much longer answer', usage: { input: 10, output: 50 } }]);
    const events: AgentEvent[] = await lastValueFrom(
      agent.promptParallel('Summarize', [{ provider: verbose, configId: 'verbose' }, { provider: cheap, configId: 'cheap' }], Evaluation.TokenEfficient).pipe(recordSession(recorder), toArray()),
    );
    const end = events.find((e) => e.type === 'ParallelLoopEnd')!;
    expect(end).toMatchObject({ selectedConfigIndex: 1, selectedLoopId: `${agent.sessionId}.cheap.1` });
    expect(agent.messages.map((m) => (m.role === 'assistant' ? textOf(m) : m.role))).toEqual(['user', 'short']);
    expect(agent.lastLoopId).toBe(`${agent.sessionId}.cheap.1`);
    const session = recorder.getSession(agent.sessionId)!;
    const siblings = sessionQueries(session).parallelSiblings(`${agent.sessionId}.cheap.1`).map((l) => l.loopId);
    expect(siblings).toEqual([`${agent.sessionId}.verbose.1`]);
  });
});
