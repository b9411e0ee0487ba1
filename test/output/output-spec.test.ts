import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { AgentError, defineOutput, InvalidOutputError, type OutputOf, type OutputSpec } from '../../src/index.js';

describe('defineOutput', () => {
  it('strict (OpenAI) only for closed objects whose properties are all required, all the way down', () => {
    const closed = (properties: Record<string, unknown>) => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false });
    expect(defineOutput(closed({ a: { type: 'string' } })).strict).toBe(true);
    expect(defineOutput(closed({ a: closed({ b: { type: 'array', items: closed({ c: { type: 'number' } }) } }) })).strict).toBe(true);
    expect(defineOutput(closed({ a: { type: 'object', properties: { b: { type: 'string' } }, required: ['b'] } })).strict).toBe(false); // inner object open
    expect(defineOutput(closed({ a: { type: 'array', items: { type: 'object', properties: {} } } })).strict).toBe(false);
    expect(defineOutput({ ...closed({ a: { type: 'string' }, b: { type: 'string' } }), required: ['a'] }).strict).toBe(false); // b optional
    // A property named like a keyword is a property, not a keyword.
    expect(defineOutput(closed({ properties: { type: 'string' }, type: { type: 'string' } })).strict).toBe(true);
    expect(defineOutput(z.strictObject({ a: z.string() })).strict).toBe(true);
    expect(defineOutput(z.object({ a: z.string() })).strict).toBe(false);
    expect(defineOutput(z.object({ a: z.string() }), { strict: true }).strict).toBe(true);
  });

  it('types the output: a Standard Schema by its output type, a JSON Schema by the type parameter, else unknown', () => {
    const fromZod = defineOutput(z.object({ n: z.string().transform((s) => s.length) }));
    expectTypeOf(fromZod).toEqualTypeOf<OutputSpec<{ n: number }>>();
    expectTypeOf(defineOutput<{ a: string }>({ type: 'object' })).toEqualTypeOf<OutputSpec<{ a: string }>>();
    expectTypeOf<OutputOf<{ type: 'object' }>>().toEqualTypeOf<unknown>();
    expectTypeOf<OutputOf<z.ZodObject<{ a: z.ZodNumber }>>>().toEqualTypeOf<{ a: number }>();
  });

  it('names: default "output"; name and description go to the provider', () => {
    const spec = defineOutput({ type: 'object' }, { name: 'weather_report', description: 'The weather' });
    expect(spec).toMatchObject({ type: 'OutputSpec', name: 'weather_report', description: 'The weather', jsonSchema: { type: 'object' } });
    expect(defineOutput({ type: 'object' }).name).toBe('output');
    expect(() => defineOutput({ type: 'object' }, { name: 'x'.repeat(65) })).toThrow(AgentError);
  });

  it('InvalidOutputError is an AgentError with code InvalidOutput, the issues and the raw text', () => {
    const error = new InvalidOutputError({ message: 'bad', issues: [{ path: '$.a', message: 'Required' }], text: '{}' });
    expect(error).toBeInstanceOf(AgentError);
    expect(error).toMatchObject({ code: 'InvalidOutput', message: 'bad', issues: [{ path: '$.a', message: 'Required' }], text: '{}' });
  });
});
