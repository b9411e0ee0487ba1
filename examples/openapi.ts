/**
 * OpenAPI operations as tools: a tiny pet store runs on 127.0.0.1, its OpenAPI document becomes
 * one tool per operation, and two tools are called the way the agent loop would call them.
 *
 * Run: npm run example examples/openapi.ts
 */
import { createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { OpenApiAuth, OperationFilter, openApiToolsFromSpec } from 'phi-rx/openapi';
import { asyncScheduler, lastValueFrom, tap, toArray } from 'rxjs';
import { runTool, type AnyTool, type ToolResult } from 'phi-rx';

const SPEC = `
openapi: 3.0.3
info: { title: Tiny pet store, version: '1.0' }
servers: [{ url: 'https://pets.example.com/v1' }]
paths:
  /pets:
    get:
      operationId: listPets
      summary: List pets
      tags: [pets]
      parameters:
        - { name: limit, in: query, schema: { type: integer, maximum: 100 } }
      responses: { '200': { description: the pets } }
  /pets/{petId}:
    get:
      operationId: showPetById
      summary: One pet
      tags: [pets]
      parameters:
        - { name: petId, in: path, required: true, schema: { type: string } }
      responses: { '200': { description: the pet }, '404': { description: no such pet } }
  /admin/reset:
    post: { operationId: resetStore, tags: [admin], responses: { '204': { description: done } } }
`;

const PETS = [
  { id: 1, name: 'Rex' },
  { id: 2, name: 'Tom' },
];

export async function main(): Promise<{ tools: string[]; list: string; missing: ToolResult }> {
  const server = createServer((req, res) => {
    if (req.headers.authorization !== 'Bearer demo-token') return reply(res, 401, { message: 'unauthorized' });
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/v1/pets') return reply(res, 200, PETS.slice(0, Number(url.searchParams.get('limit') ?? PETS.length)));
    const pet = PETS.find((p) => `/v1/pets/${p.id}` === url.pathname);
    return pet ? reply(res, 200, pet) : reply(res, 404, { message: `no pet at ${url.pathname}` });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const { tools, warnings } = await openApiToolsFromSpec(
      SPEC,
      // Override servers[0] to reach the local server; the token is sent but never printed.
      { baseUrl: `http://127.0.0.1:${port}/v1`, auth: OpenApiAuth.bearer('demo-token'), namePrefix: 'pets' },
      OperationFilter.byTag('pets'), // leaves the admin operation out
    );
    console.log('tools:', tools.map((t) => t.name).join(', '), warnings.length ? `(warnings: ${warnings.join('; ')})` : '');

    const { result: list } = await callTool(tools, 'pets__listPets', { limit: 1 });
    console.log(resultText(list)); // "GET http://127.0.0.1:PORT/v1/pets?limit=1 → 200" then the body

    // A 404 is a result the model can read (isError: true), not an exception.
    const { result: missing } = await callTool(tools, 'pets__showPetById', { petId: '99' });
    console.log(resultText(missing), `(isError: ${missing.isError === true})`);
    return { tools: tools.map((t) => t.name), list: resultText(list), missing };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

// ---- a helper, here so that this file runs on its own when copied into a project

/**
 * Calls the tool named `name` once, the way the agent loop does (through `runTool`), printing its
 * progress as it comes; resolves with the result and the progress lines (examples/call-tool.ts).
 */
async function callTool(tools: readonly AnyTool[], name: string, args: Record<string, unknown>): Promise<{ result: ToolResult; progress: string[] }> {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  const run$ = runTool(tool, args, { toolCallId: 'example', loopId: 'example', scheduler: asyncScheduler });
  const emissions = await lastValueFrom(run$.pipe(tap((e) => e.kind === 'progress' && console.log('  progress:', e.text)), toArray()));
  const progress = emissions.flatMap((e) => (e.kind === 'progress' ? [e.text] : []));
  const result = emissions.flatMap((e) => (e.kind === 'result' ? [e.result] : []))[0]!;
  return { result, progress };
}

/** A tool result as text, other content as `[type]`. */
const resultText = (result: ToolResult): string => result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
