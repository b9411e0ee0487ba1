import { readdirSync } from 'node:fs';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { agentLoop, userMessage } from '../../../src/index.js';
import type { AgentEvent, Tool } from '../../../src/index.js';
import { openApiToolsFromFile, openApiToolsFromSpec } from '../../../src/integrations/openapi/index.js';
import { scriptedModel, scriptedProvider } from '../../../src/testing/index.js';
import { byName, resultOf, textOf } from '../mcp/helpers.js';
import { fixture, openApiFixturesMissing, openApiFixtures } from './fixtures.js';
import { describeNeeding } from '../../support/skip.js';
import { startPetstore } from './petstore-server.js';
import type { PetstoreServer } from './petstore-server.js';

/** Under /echo, so the loopback server answers every path with what it saw. */
const SPEC = `
openapi: 3.0.3
info: { title: Args, version: '1.0' }
paths:
  /echo/pets/{petId}:
    delete:
      operationId: deletePet
      parameters: [{ name: petId, in: path, required: true, schema: { type: string } }]
      responses: { '204': { description: gone } }
  /echo/pets:
    post:
      operationId: addPet
      parameters:
        - { name: limit, in: query, schema: { type: integer, minimum: 1, exclusiveMaximum: true, maximum: 100 } }
        - { name: kind, in: query, schema: { type: string, enum: [dog, cat] } }
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties:
                name: { type: string }
                tags: { type: array, items: { type: string } }
                owner: { type: object, properties: { email: { type: string, format: email } }, nullable: true }
      responses: { '200': { description: ok } }
`;

const events = (run$: ReturnType<typeof agentLoop>): Promise<AgentEvent[]> => lastValueFrom(run$.pipe(toArray()));

describe('OpenAPI tools: path parameters and argument types', () => {
  let server: PetstoreServer;
  let tools: Tool[];
  beforeAll(async () => {
    server = await startPetstore();
    ({ tools } = await openApiToolsFromSpec(SPEC, { baseUrl: `${server.origin}` }));
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });

  it.each([
    ['a/b', '/echo/pets/a%2Fb'],
    ['../..', '/echo/pets/..%2F..'],
    ['%2e%2e', '/echo/pets/%252e%252e'],
    ['%2F', '/echo/pets/%252F'],
    ['x?admin=1', '/echo/pets/x%3Fadmin%3D1'],
    ['x#frag', '/echo/pets/x%23frag'],
    ['...', '/echo/pets/...'],
  ])('sends path parameter %j as one segment of the request line', async (petId, target) => {
    const result = await resultOf(byName(tools, 'deletePet'), { petId });
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([`DELETE ${target}`]);
    expect(textOf(result)).toContain(`DELETE ${server.origin}${target} →`);
  });

  it.each(['..', '.'])('refuses the dot segment %j: nothing is sent', async (petId) => {
    const result = await resultOf(byName(tools, 'deletePet'), { petId });
    expect(result).toEqual({
      isError: true,
      content: [{ type: 'text', text: `path parameter "petId" of deletePet (DELETE /echo/pets/{petId}) cannot be "${petId}": a dot segment would change the path` }],
    });
    expect(server.requests).toHaveLength(0);
  });

  it('validates argument types against the operation schema, naming where', () => {
    const validate = byName(tools, 'addPet').validate!;
    expect(validate({ body: { name: 'Rex', tags: ['a'], owner: null }, limit: 5, kind: 'dog' })).toMatchObject({ ok: true });
    const checked = validate({ body: { name: 7, tags: 'a', owner: { email: 'nope' } }, limit: 'many', kind: 'cow' });
    expect(checked.ok).toBe(false);
    const error = checked.ok ? '' : checked.error;
    expect(error).toMatch(/^invalid arguments: /);
    for (const where of ['/limit', '/kind', '/body/name', '/body/tags', '/body/owner/email']) expect(error).toContain(`${where}:`);
    expect(validate({ body: { name: 'Rex' }, limit: 100 })).toMatchObject({ ok: false, error: expect.stringContaining('/limit:') });
    expect(validate({ limit: 1 })).toEqual({ ok: false, error: 'missing required argument: body' });
  });

  it('called directly (not through the loop), a call with wrong types is an error result and sends nothing', async () => {
    const result = await resultOf(byName(tools, 'addPet'), { body: { name: 'Rex' }, limit: 'ten' });
    expect(result).toEqual({ isError: true, content: [{ type: 'text', text: expect.stringMatching(/^addPet: invalid arguments: \/limit: /) }] });
    expect(server.requests).toHaveLength(0);
  });

  it('in a run, a call with wrong types is an error result for the model and never reaches the server', async () => {
    const provider = scriptedProvider([
      { toolCalls: [{ name: 'addPet', arguments: { body: { name: ['Rex'] }, limit: '5' } }] },
      { text: 'sorry' },
    ]);
    const all = await events(agentLoop([userMessage('add Rex', 0)], { systemPrompt: '', messages: [], tools }, { model: scriptedModel(), provider, retry: false }));
    const end = all.find((e) => e.type === 'ToolExecutionEnd');
    expect(end).toMatchObject({ type: 'ToolExecutionEnd', isError: true });
    expect(JSON.stringify(end)).toMatch(/\/body\/name:.*\/limit:|\/limit:.*\/body\/name:/);
    expect(server.requests).toHaveLength(0);
  });
});

describeNeeding(openApiFixturesMissing)('OpenAPI argument validation compiles for every fixture spec', () => {
  const specs = openApiFixturesMissing === undefined ? readdirSync(openApiFixtures).filter((f) => /\.ya?ml$/.test(f)) : [];
  it.each(specs)('%s: every tool schema compiles, validates an empty call and rejects a wrong type', async (name) => {
    const { tools } = await openApiToolsFromFile(fixture(name), { baseUrl: 'http://127.0.0.1:9' });
    for (const tool of tools) {
      const props = Object.keys((tool.parameters as { properties?: object }).properties ?? {});
      const result = tool.validate!({});
      expect(typeof result.ok).toBe('boolean');
      const typed = props.find((p) => typeof (tool.parameters as { properties: Record<string, { type?: unknown }> }).properties[p]?.type === 'string');
      if (typed) expect(tool.validate!({ [typed]: { not: 'a string' } }).ok).toBe(false);
    }
  });
});
