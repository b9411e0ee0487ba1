import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as zm from 'zod/mini';
import * as v from 'valibot';
import { type } from 'arktype';
import { toJsonSchema } from '@valibot/to-json-schema';
import { agentLoop, AgentError, defineTool, userMessage, type AgentEvent, type AnyTool, type JsonSchema } from '../../src/index.js';
import { config, context, events } from '../agent/helpers.js';

/** Runs one model turn that calls `tool` with `args`, then a closing text turn; returns what the tool answered. */
async function callWith(tool: AnyTool, args: Record<string, unknown>): Promise<{ text: string; isError: boolean; all: AgentEvent[] }> {
  const cfg = config([{ toolCalls: [{ name: tool.name, arguments: args }] }, { text: 'done' }]);
  const all = await events(agentLoop([userMessage('go', 0)], context([tool]), cfg));
  const end = all.find((e) => e.type === 'ToolExecutionEnd') as Extract<AgentEvent, { type: 'ToolExecutionEnd' }>;
  const text = end.result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  return { text, isError: end.isError, all };
}

function recorder<A>(name: string, parameters: unknown, extra: Record<string, unknown> = {}): { tool: AnyTool; calls: A[] } {
  const calls: A[] = [];
  const tool = defineTool({ name, description: name, parameters: parameters as JsonSchema, ...extra, execute: (args) => (calls.push(args as A), 'ran') }) as AnyTool;
  return { tool, calls };
}

const draft07: JsonSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  definitions: { port: { type: 'integer', minimum: 1, maximum: 65535 } },
  properties: { host: { type: 'string' }, port: { $ref: '#/definitions/port' }, secure: { type: 'boolean' } },
  required: ['host'],
  if: { properties: { secure: { const: true } }, required: ['secure'] },
  then: { required: ['port'] },
  additionalProperties: false,
};

const draft2020: JsonSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: { email: { type: 'string', format: 'email' } },
  properties: {
    to: { $ref: '#/$defs/email' },
    body: { oneOf: [{ type: 'string', maxLength: 10 }, { type: 'array', items: { type: 'string' } }] },
    when: { type: 'string', format: 'date-time' },
  },
  required: ['to', 'body'],
};

describe('defineTool with JSON Schema: always validated (issue 12)', () => {
  it('draft-07 definitions/$ref and if/then: invalid arguments never reach execute, the error names the path', async () => {
    const { tool, calls } = recorder('connect', draft07);
    const badPort = await callWith(tool, { host: 'h', port: 70000 });
    expect(badPort.isError).toBe(true);
    expect(badPort.text).toContain('arguments.port');
    const missingThen = await callWith(tool, { host: 'h', secure: true });
    expect(missingThen.text).toContain('required property "port"');
    const extra = await callWith(tool, { host: 'h', nope: 1 });
    expect(extra.text).toMatch(/Property "nope"/);
    expect(calls).toEqual([]);
    const ok = await callWith(tool, { host: 'h', secure: true, port: 443 });
    expect(ok).toMatchObject({ text: 'ran', isError: false });
    expect(calls).toEqual([{ host: 'h', secure: true, port: 443 }]);
  });

  it('2020-12 $defs, oneOf and formats', async () => {
    const { tool, calls } = recorder('mail', draft2020);
    expect((await callWith(tool, { to: 'not an email', body: 'hi' })).text).toContain('arguments.to');
    expect((await callWith(tool, { to: 'a@b.example', body: 'far too long for the limit' })).isError).toBe(true);
    expect((await callWith(tool, { to: 'a@b.example', body: 'hi', when: 'yesterday' })).text).toContain('arguments.when');
    expect(calls).toEqual([]);
    expect((await callWith(tool, { to: 'a@b.example', body: ['x', 'y'], when: '2026-01-01T00:00:00Z' })).text).toBe('ran');
    expect(calls).toHaveLength(1);
  });

  it('validates without eval or new Function (strict CSP)', () => {
    const original = globalThis.Function;
    const trap = function () { throw new Error('code generation is forbidden'); } as unknown as FunctionConstructor;
    (globalThis as { Function: FunctionConstructor }).Function = trap;
    const originalEval = globalThis.eval;
    globalThis.eval = trap as unknown as typeof eval;
    try {
      const tool = defineTool({ name: 'csp', description: 'csp', parameters: { ...draft07 }, execute: () => 'ran' });
      expect(tool.validate!({ host: 'h', port: 0 })).toMatchObject({ ok: false });
      expect(tool.validate!({ host: 'h', port: 80 })).toMatchObject({ ok: true });
    } finally {
      (globalThis as { Function: FunctionConstructor }).Function = original;
      globalThis.eval = originalEval;
    }
  });

  it.each([
    ['an unresolved $ref', { type: 'object', properties: { a: { $ref: '#/definitions/missing' } } }, /unresolved \$ref "#\/definitions\/missing"/],
    ['an unknown type', { type: 'object', properties: { a: { type: 'text' } } }, /\/properties\/a\/type: unknown type "text"/],
    ['an invalid pattern', { type: 'object', properties: { a: { type: 'string', pattern: '(' } } }, /pattern: invalid regular expression/],
    ['required that is not a list', { type: 'object', required: 'a' }, /required: must be an array/],
    ['parameters that are not an object schema', { type: 'string' }, /must be an object schema .* got type "string"/],
    ['parameters with no type', { properties: { a: { type: 'string' } } }, /must be an object schema/],
  ])('a JSON Schema with %s is a definition error naming the tool', (_what, parameters, message) => {
    const define = () => defineTool({ name: 'broken', description: 'x', parameters: parameters as JsonSchema, execute: () => 'never' });
    expect(define).toThrow(AgentError);
    expect(define).toThrow(/defineTool "broken"/);
    expect(define).toThrow(message);
  });

  it('a missing execute is a definition error naming the tool', () => {
    expect(() => defineTool({ name: 'lazy', description: 'x', parameters: { type: 'object' } } as never)).toThrow(/defineTool "lazy": execute must be a function/);
  });

  it('does not annotate the schema object it was given (it is what the model is sent)', () => {
    const schema = structuredClone(draft07);
    const tool = defineTool({ name: 'clean', description: 'x', parameters: schema, execute: () => 'ok' });
    expect(tool.parameters).toEqual(draft07);
    expect(Object.getOwnPropertyNames(tool.parameters.properties as object)).toEqual(['host', 'port', 'secure']);
    expect(Object.getOwnPropertyNames((tool.parameters.properties as { port: object }).port)).toEqual(['$ref']);
  });
});

describe('defineTool with JSON Schema: where a required property is missing', () => {
  it('is named at the property itself, nested too, and every missing one is listed', async () => {
    const { tool } = recorder('mail', {
      type: 'object',
      properties: { to: { type: 'string' }, envelope: { type: 'object', properties: { from: { type: 'string' } }, required: ['from'] } },
      required: ['to', 'envelope'],
    });
    expect((await callWith(tool, {})).text).toBe('Invalid arguments for tool "mail": arguments.to: required property "to" is missing; arguments.envelope: required property "envelope" is missing');
    expect((await callWith(tool, { to: 'a', envelope: {} })).text).toBe('Invalid arguments for tool "mail": arguments.envelope.from: required property "from" is missing');
  });
});

describe('defineTool with Standard Schema (issue 12)', () => {
  it('zod 4: validated through ~standard, JSON Schema derived once per schema object', async () => {
    const schema = z.object({ n: z.number().int().positive() });
    const { tool, calls } = recorder<{ n: number }>('zod4', schema);
    expect((await callWith(tool, { n: -1 })).text).toMatch(/arguments\.n: /);
    expect((await callWith(tool, { n: 3 })).text).toBe('ran');
    expect(calls).toEqual([{ n: 3 }]);
    expect(tool.parameters).toMatchObject({ type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] });
    expect(tool.parameters.$schema).toBeUndefined();
    const again = defineTool({ name: 'zod4b', description: 'x', parameters: schema, execute: () => 'ok' });
    expect(again.parameters).toBe(tool.parameters);
  });

  it('valibot: validated through ~standard; the JSON Schema for the model comes from jsonSchema', async () => {
    const schema = v.object({ city: v.pipe(v.string(), v.minLength(2)) });
    const { tool, calls } = recorder('weather', schema, { jsonSchema: toJsonSchema(schema) as JsonSchema });
    const bad = await callWith(tool, { city: 'X' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain('arguments.city');
    expect((await callWith(tool, { city: 'Oslo' })).text).toBe('ran');
    expect(calls).toEqual([{ city: 'Oslo' }]);
    expect(tool.parameters).toMatchObject({ type: 'object', properties: { city: { type: 'string', minLength: 2 } } });
  });

  it('valibot without jsonSchema: a definition error naming the tool and the vendor, not a tool that skips validation', () => {
    expect(() => defineTool({ name: 'vb', description: 'x', parameters: v.object({ a: v.string() }), execute: () => 'ok' }))
      .toThrow(/defineTool "vb": cannot derive a JSON Schema for the model from this valibot schema/);
  });

  it('a zod-3-shaped schema (Standard Schema, no zod 4 internals) passed from JavaScript is validated', async () => {
    // What zod 3.24+ exposes: a `~standard` property with vendor "zod", and no `_zod` / toJSONSchema support.
    const zod3Like = {
      '~standard': {
        version: 1 as const,
        vendor: 'zod',
        validate: (value: unknown) => {
          const n = (value as { n?: unknown }).n;
          return typeof n === 'number' ? { value: { n } } : { issues: [{ message: 'Expected number, received ' + typeof n, path: [{ key: 'n' }] }] };
        },
      },
    };
    expect(() => defineTool({ name: 'z3', description: 'x', parameters: zod3Like, execute: () => 'ok' })).toThrow(/defineTool "z3".*zod schema/);
    const { tool, calls } = recorder('z3', zod3Like, { jsonSchema: { type: 'object', properties: { n: { type: 'number' } } } });
    expect((await callWith(tool, { n: 'x' })).text).toBe('Invalid arguments for tool "z3": arguments.n: Expected number, received string');
    expect((await callWith(tool, { n: 2 })).text).toBe('ran');
    expect(calls).toEqual([{ n: 2 }]);
  });

  it('arktype: validated through ~standard, JSON Schema from its own converter', async () => {
    const schema = type({ city: 'string >= 2', 'days?': '1 <= number.integer <= 7' });
    const { tool, calls } = recorder('forecast', schema);
    const bad = await callWith(tool, { city: 'Oslo', days: 9 });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain('arguments.days');
    expect((await callWith(tool, { city: 'Oslo', days: 3 })).text).toBe('ran');
    expect(calls).toEqual([{ city: 'Oslo', days: 3 }]);
    expect(tool.parameters).toMatchObject({ type: 'object', properties: { days: { type: 'integer', maximum: 7 } }, required: ['city'] });
  });

  it('execute gets the schema\'s output type (checked by the type-check): valibot and arktype', () => {
    const vb = v.object({ city: v.string() });
    const ark = type({ n: 'number' });
    const a = defineTool({ name: 'vt', description: 'x', parameters: vb, jsonSchema: toJsonSchema(vb) as JsonSchema, execute: ({ city }) => city.toUpperCase() });
    const b = defineTool({ name: 'at', description: 'x', parameters: ark, execute: ({ n }) => (n + 1).toFixed(0) });
    expect([a.name, b.name]).toEqual(['vt', 'at']);
  });

  it('zod/mini (no converter of its own, and phi-rx imports no zod): a definition error naming the tool, then validated through ~standard with the jsonSchema it is given', async () => {
    const schema = zm.object({ n: zm.number() });
    expect(() => defineTool({ name: 'mini', description: 'x', parameters: schema, execute: () => 'ok' }))
      .toThrow(/defineTool "mini": cannot derive a JSON Schema for the model from this zod schema \(zod\/mini .*toJSONSchema/);
    const { tool, calls } = recorder('mini', schema, { jsonSchema: zm.toJSONSchema(schema) as JsonSchema });
    expect((await callWith(tool, { n: 'x' })).text).toMatch(/^Invalid arguments for tool "mini": arguments\.n: /);
    expect((await callWith(tool, { n: 2 })).text).toBe('ran');
    expect(calls).toEqual([{ n: 2 }]);
    expect(tool.parameters).toMatchObject({ type: 'object', properties: { n: { type: 'number' } } });
  });

  it('a zod type JSON Schema cannot represent: a definition error naming the tool and zod\'s reason, unless jsonSchema is given', () => {
    const schema = z.object({ when: z.date() });
    expect(() => defineTool({ name: 'when', description: 'x', parameters: schema, execute: () => 'ok' }))
      .toThrow(/defineTool "when": cannot derive a JSON Schema for the model from this zod schema \(its converter failed: Date cannot be represented in JSON Schema\)/);
    const tool = defineTool({ name: 'when', description: 'x', parameters: schema, jsonSchema: { type: 'object', properties: { when: { type: 'string' } } }, execute: ({ when }) => when.toISOString() });
    expect(tool.parameters).toEqual({ type: 'object', properties: { when: { type: 'string' } } });
  });

  it('execute gets a zod schema\'s output type through ~standard (checked by the type-check)', () => {
    const tool = defineTool({ name: 'zt', description: 'x', parameters: z.object({ n: z.string().transform((s) => s.length) }).partial(), jsonSchema: { type: 'object' }, execute: ({ n }) => (n ?? 0).toFixed(0) });
    expect(tool.name).toBe('zt');
  });

  it('a zod schema older than 3.24 (no ~standard) is refused by name, not sent as a JSON Schema', () => {
    const oldZod = { _def: { typeName: 'ZodObject' }, safeParse: () => ({ success: true, data: {} }), parse: () => ({}) };
    expect(() => defineTool({ name: 'old', description: 'x', parameters: oldZod as never, execute: () => 'ok' }))
      .toThrow(/defineTool "old": parameters look like a zod schema without Standard Schema support/);
  });

  it('an asynchronous Standard Schema is refused clearly at call time, and execute is not called', async () => {
    const asyncSchema = { '~standard': { version: 1 as const, vendor: 'custom', validate: async (value: unknown) => ({ value }) } };
    const { tool, calls } = recorder('slow', asyncSchema, { jsonSchema: { type: 'object' } });
    expect((await callWith(tool, {})).text).toMatch(/validates asynchronously/);
    expect(calls).toEqual([]);
  });
});
