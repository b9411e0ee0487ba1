import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../examples/mcp-server.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('examples/mcp-server.ts', () => {
  it('serves its agent over stdio; calling it answers, and the publication is approved through elicitation', async () => {
    const server = [process.execPath, '--import', 'tsx', '--conditions=phi-rx-source', path.join(repoRoot, 'examples/mcp-server.ts'), '--serve'];
    const out = await main(server);
    expect(out.tools).toEqual(['ask_assistant']);
    expect(out.answers).toEqual(['You asked: "What is six times seven?". The answer is 42.', 'Done: published "Hello MCP".']);
    expect(out.asked).toEqual(['example-server asks to run the tool "publish" with the arguments {"title":"Hello MCP"}. Approve?']);
  }, 120_000);
});
