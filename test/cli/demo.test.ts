import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BasicAgent, runToEnd, textOf } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { countWordsTool, scriptFromFile } from '../../src/cli/demo.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'phi-rx-demo-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function scriptFile(name: string, turns: unknown): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, JSON.stringify(turns));
  return file;
}

describe('the CLI demo', () => {
  it('count_words describes its arguments as JSON Schema and refuses a text that is not a string', () => {
    expect(countWordsTool.parameters).toEqual({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false });
    expect(countWordsTool.validate!({ text: 'a b' }).ok).toBe(true);
    const bad = countWordsTool.validate!({ text: 3 });
    expect(bad.ok).toBe(false);
    expect(bad.ok ? '' : bad.error).toContain('text');
  });

  it('--script plays its turns, tool calls and errors included', async () => {
    const file = await scriptFile('ok.json', [
      { text: 'counting', toolCalls: [{ name: 'count_words', arguments: { text: 'one two three' } }], usage: { input: 5, output: 2 } },
      { text: 'three words' },
      { error: { kind: 'auth', message: 'the key was refused' } },
    ]);
    const agent = new BasicAgent({ model: scriptedModel(), provider: await scriptFromFile(file), tools: [countWordsTool] });
    const end = await runToEnd(agent.prompt('count'));
    expect(end.stopReason).toBe('stop');
    const result = agent.messages.find((m) => m.role === 'toolResult');
    expect(result && textOf(result)).toBe('3');
    const answer = agent.messages.at(-1)!;
    expect(answer.role === 'assistant' && textOf(answer)).toBe('three words');
    const failed = await runToEnd(agent.prompt('again'));
    expect(failed.stopReason).toBe('error');
    const last = failed.messages.at(-1)!;
    expect(last.role === 'assistant' && last.errorMessage).toContain('the key was refused');
  });

  it('a bad --script file is refused naming the file, the turn and the field', async () => {
    const kind = await scriptFile('kind.json', [{ text: 'ok' }, { error: { kind: 'teapot', message: 'x' } }]);
    await expect(scriptFromFile(kind)).rejects.toThrow(`${kind}: turns[1].error.kind: Invalid option: expected one of "rateLimited"|"network"|"auth"|"api"|"contextOverflow"|"other"`);
    const extra = await scriptFile('extra.json', [{ toolCalls: [{ name: 'a', args: {} }] }]);
    await expect(scriptFromFile(extra)).rejects.toThrow(`${extra}: turns[0].toolCalls[0].args: unknown key "args"`);
    const notArray = await scriptFile('object.json', { text: 'hi' });
    await expect(scriptFromFile(notArray)).rejects.toThrow(`${notArray}: turns: Invalid input: expected array, received object`);
  });
});
