import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { agentLoop, AgentError, defineOutput, userMessage, type AgentEvent } from '../../src/index.js';
import { describeEvent } from '../../src/testing/index.js';
import { addTool, agentEnd, config, context, events, model, run } from '../agent/helpers.js';

const Weather = z.object({ city: z.string(), celsius: z.number() });

const textOfUser = (e: AgentEvent): string | undefined =>
  e.type === 'MessageEnd' && e.message.role === 'user' ? (e.message.content as Array<{ text: string }>)[0]!.text : undefined;

describe('agentLoop with config.output', () => {
  it('sends the schema as the request response format and ends with the validated output on AgentEnd', async () => {
    const cfg = config([{ text: '{"city":"Paris","celsius":18}' }], { output: Weather });
    const all = await events(agentLoop([userMessage('weather?', 0)], context([]), cfg));
    expect(cfg.provider.requests[0]!.responseFormat).toEqual({
      name: 'output',
      strict: false,
      schema: { type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'number' } }, required: ['city', 'celsius'] },
    });
    const end = agentEnd(all);
    expect(end.output).toEqual({ city: 'Paris', celsius: 18 });
    expect(end.outputError).toBeUndefined();
    expect(end.stopReason).toBe('stop');
  });

  it('runs tools first; the output is the final answer', async () => {
    const all = await run([{ toolCalls: [{ name: 'add', arguments: { a: 9, b: 9 } }] }, { text: '{"city":"Oslo","celsius":18}' }], [addTool], { output: Weather });
    expect(agentEnd(all).output).toEqual({ city: 'Oslo', celsius: 18 });
  });

  it('an invalid answer gets one corrective turn with the issues; the corrected answer is the output', async () => {
    const cfg = config([{ text: '{"city":"Paris","celsius":"warm"}' }, { text: '{"city":"Paris","celsius":21}' }], { output: Weather });
    const all = await events(agentLoop([userMessage('weather?', 0)], context([]), cfg));
    expect(all.filter((e) => e.type !== 'MessageUpdate').map(describeEvent)).toEqual([
      'AgentStart', 'TurnStart:0', 'MessageStart:user', 'MessageEnd:user', 'MessageStart:assistant', 'MessageEnd:assistant', 'TurnEnd',
      'TurnStart:1', 'MessageStart:user', 'MessageEnd:user', 'MessageStart:assistant', 'MessageEnd:assistant', 'TurnEnd',
      'AgentEnd:stop',
    ]);
    const corrective = all.map(textOfUser).filter((t) => t !== undefined)[1];
    expect(corrective).toBe(
      'Your answer did not match the required output schema:\n- $.celsius: Invalid input: expected number, received string\nAnswer again with only the corrected JSON object.',
    );
    // The model sees its failed answer and the correction.
    expect(cfg.provider.requests[1]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(agentEnd(all).output).toEqual({ city: 'Paris', celsius: 21 });
  });

  it('after the corrective turn, a still invalid answer ends the run with outputError (issues and raw text), no third turn', async () => {
    const cfg = config([{ text: 'It is warm.' }, { text: '{"city":"Paris"}' }, { text: 'never asked' }], { output: Weather });
    const end = agentEnd(await events(agentLoop([userMessage('weather?', 0)], context([]), cfg)));
    expect(cfg.provider.remaining).toBe(1);
    expect(end.output).toBeUndefined();
    expect(end.outputError).toEqual({
      message: 'The answer did not match the output schema after a corrective turn:\n- $.celsius: Invalid input: expected number, received undefined',
      issues: [{ path: '$.celsius', message: 'Invalid input: expected number, received undefined' }],
      text: '{"city":"Paris"}',
    });
  });

  it('a run that fails (provider error) has no output and no outputError and takes no corrective turn', async () => {
    const cfg = config([{ error: new Error('boom') }, { text: 'never asked' }], { output: Weather });
    const end = agentEnd(await events(agentLoop([userMessage('weather?', 0)], context([]), cfg)));
    expect(end.stopReason).toBe('error');
    expect(end).not.toHaveProperty('output');
    expect(end).not.toHaveProperty('outputError');
    expect(cfg.provider.remaining).toBe(1);
  });

  it('with a models chain, the fallback model gets the same response format, and its answer is the output', async () => {
    const { ProviderError } = await import('../../src/types/errors.js');
    const { scriptedProvider } = await import('../../src/testing/index.js');
    const fallback = scriptedProvider([{ text: '{"city":"Lima","celsius":20}' }]);
    const backup = { id: 'backup-model', api: 'scripted' as const, provider: 'backup' };
    const cfg = config([{ error: ProviderError.network('HTTP 503') }], { output: Weather, models: [model, { model: backup, provider: fallback }] });
    const end = agentEnd(await events(agentLoop([userMessage('weather?', 0)], context([]), cfg)));
    expect(fallback.requests[0]!.responseFormat).toEqual(cfg.provider.requests[0]!.responseFormat);
    expect(fallback.requests[0]!.responseFormat?.name).toBe('output');
    expect(end.output).toEqual({ city: 'Lima', celsius: 20 });
  });

  it('a run without output has neither field and sends no response format', async () => {
    const cfg = config([{ text: '{"city":"Paris"}' }]);
    const end = agentEnd(await events(agentLoop([userMessage('weather?', 0)], context([]), cfg)));
    expect(end).not.toHaveProperty('output');
    expect(cfg.provider.requests[0]).not.toHaveProperty('responseFormat');
  });

  it('a JSON Schema output via defineOutput with a name, strict when the schema allows it', async () => {
    const person = defineOutput<{ name: string }>(
      { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false },
      { name: 'person', description: 'The person asked about' },
    );
    const cfg = config([{ text: '{"name":"Ada"}' }], { output: person });
    const end = agentEnd(await events(agentLoop([userMessage('who?', 0)], context([]), cfg)));
    expect(cfg.provider.requests[0]!.responseFormat).toMatchObject({ name: 'person', description: 'The person asked about', strict: true });
    expect(end.output).toEqual({ name: 'Ada' });
  });

  it.each([
    [{ type: 'string' }, 'config.output: the schema must describe an object (type "object"), got type "string"'],
    [{ type: 'object', properties: { a: { type: 'strin' } } }, 'config.output: schema at /properties/a/type: unknown type "strin"'],
    [42, 'config.output: expected a zod / Standard Schema, a JSON Schema object or defineOutput(...), got number'],
    [defineOutputLater('bad name!'), 'config.output: name "bad name!": expected 1 to 64 letters, digits, "_" or "-"'],
  ])('a bad output (or defineOutput of one) is an InvalidConfig naming config.output (%#)', async (output, message) => {
    const attempt = async () => events(agentLoop([userMessage('x', 0)], context([]), config([], { output: typeof output === 'function' ? output() : (output as never) })));
    await expect(attempt()).rejects.toThrow(new AgentError('InvalidConfig', message));
  });

  it('an output named like one of the tools is refused (the output tool would clash with it)', async () => {
    const output = defineOutput({ type: 'object' }, { name: 'add' });
    await expect(events(agentLoop([userMessage('x', 0)], context([addTool]), config([], { output })))).rejects.toThrow(
      new AgentError('InvalidConfig', 'config.output: name "add" is also the name of tools[0]; give the output another name with defineOutput(schema, { name })'),
    );
  });

  it('a Standard Schema that cannot say its JSON Schema is refused, naming the way out', async () => {
    const opaque = { '~standard': { version: 1 as const, vendor: 'valibot', validate: (v: unknown) => ({ value: v }) } };
    await expect(events(agentLoop([userMessage('x', 0)], context([]), config([], { output: opaque })))).rejects.toThrow(
      'config.output: cannot derive a JSON Schema from this valibot schema (it carries no JSON Schema converter): pass one as defineOutput(schema, { jsonSchema })',
    );
    const withSchema = defineOutput(opaque, { jsonSchema: { type: 'object' } });
    const end = agentEnd(await events(agentLoop([userMessage('x', 0)], context([]), config([{ text: '{"a":1}' }], { output: withSchema }))));
    expect(end.output).toEqual({ a: 1 });
  });
});

function defineOutputLater(name: string) {
  return () => defineOutput({ type: 'object' }, { name });
}

describe('BasicAgent structured output', () => {
  it('agent.run(text, { output }) resolves the typed output; agent.run(text) still resolves the text', async () => {
    const { BasicAgent } = await import('../../src/index.js');
    const { scriptedModel, scriptedProvider } = await import('../../src/testing/index.js');
    const provider = scriptedProvider([{ text: '{"city":"Rome","celsius":25}' }, { text: 'plain text' }]);
    const agent = new BasicAgent({ model: scriptedModel(), provider, retry: false });
    const weather = await agent.run('weather?', { output: Weather });
    expectTypeOf(weather).toEqualTypeOf<{ city: string; celsius: number }>();
    expect(weather).toEqual({ city: 'Rome', celsius: 25 });
    expect(provider.requests[0]!.responseFormat?.name).toBe('output');
    expect(await agent.run('and now?')).toBe('plain text');
    expect(provider.requests[1]).not.toHaveProperty('responseFormat');
  });

  it('rejects with InvalidOutputError (issues, raw text) when the answer stays invalid; options.output on the agent applies to every run', async () => {
    const { BasicAgent, InvalidOutputError, runToEnd } = await import('../../src/index.js');
    const { scriptedModel, scriptedProvider } = await import('../../src/testing/index.js');
    const provider = scriptedProvider([{ text: '{}' }, { text: '{"city":1}' }, { text: '{"city":"Bern","celsius":9}' }]);
    const agent = new BasicAgent({ model: scriptedModel(), provider, retry: false, output: Weather });
    const error = await agent.run('weather?', { output: Weather }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOutputError);
    expect(error).toMatchObject({ code: 'InvalidOutput', text: '{"city":1}', issues: [{ path: '$.city', message: 'Invalid input: expected string, received number' }, { path: '$.celsius', message: 'Invalid input: expected number, received undefined' }] });
    const end = await runToEnd(agent.prompt('again'));
    expect(end.output).toEqual({ city: 'Bern', celsius: 9 });
  });

  it('runOutput / outputOf type the output by the schema; a JSON Schema is unknown unless defineOutput<T> says', async () => {
    const { runOutput, outputOf } = await import('../../src/index.js');
    const person = defineOutput<{ name: string }>({ type: 'object', properties: { name: { type: 'string' } } });
    const value = await runOutput(agentLoop([userMessage('who?', 0)], context([]), config([{ text: '{"name":"Ada"}' }], { output: person })), person);
    expectTypeOf(value).toEqualTypeOf<{ name: string }>();
    expect(value).toEqual({ name: 'Ada' });
    const end = agentEnd(await events(agentLoop([userMessage('who?', 0)], context([]), config([{ text: '{"a":1}' }], { output: { type: 'object' } }))));
    const raw = outputOf(end, { type: 'object' });
    expectTypeOf(raw).toEqualTypeOf<unknown>();
    expect(raw).toEqual({ a: 1 });
    // A run that ended without an answer to check (here: no output configured) is an AgentRunError.
    const plain = agentEnd(await events(agentLoop([userMessage('who?', 0)], context([]), config([{ text: 'hi' }]))));
    expect(() => outputOf(plain)).toThrow('The agent run ended without a structured output to give (it stopped with reason "stop")');
  });
});
