import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/index.js';

const jsonSchema = () => ({ type: 'object', properties: { path: { type: 'string', description: 'a file' }, line: { type: 'integer', minimum: 1 } }, required: ['path'] });
const zodSchema = (description = 'a file') => z.object({ path: z.string().describe(description), line: z.number().int().min(1).optional() });

describe('schemas are compiled once per structure', () => {
  it('an equal JSON Schema made anew gets the same compiled validator; another one does not', () => {
    const tool = (parameters: { [key: string]: unknown }) => defineTool({ name: 'lookup', description: 'Looks up', parameters, execute: () => '' });
    const first = tool(jsonSchema());
    expect(tool(jsonSchema()).validate).toBe(first.validate);
    const other = tool({ ...jsonSchema(), required: ['line'] });
    expect(other.validate).not.toBe(first.validate);
    expect(other.validate?.({ path: 'x' })).toEqual({ ok: false, error: 'arguments.line: required property "line" is missing' });
    expect(first.validate?.({ line: 2 })).toEqual({ ok: false, error: 'arguments.path: required property "path" is missing' });
  });

  it('an equal zod schema made anew gets the same JSON Schema, frozen; a different description does not', () => {
    const tool = (parameters: ReturnType<typeof zodSchema>) => defineTool({ name: 'lookup', description: 'Looks up', parameters, execute: ({ path }) => path });
    const a = tool(zodSchema());
    const b = tool(zodSchema());
    expect(b.parameters).toBe(a.parameters);
    expect(Object.isFrozen(a.parameters)).toBe(true);
    expect(Object.isFrozen((a.parameters as { properties: object }).properties)).toBe(true);
    const c = tool(zodSchema('another file'));
    expect(c.parameters).not.toBe(a.parameters);
    expect((c.parameters as { properties: { path: { description: string } } }).properties.path.description).toBe('another file');
    expect(b.validate?.({ path: 'x', line: 0 })).toMatchObject({ ok: false });
    expect(b.validate?.({ path: 'x', line: 3 })).toEqual({ ok: true, value: { path: 'x', line: 3 } });
  });

  it('refinements stay each schema\'s own: validation goes through the schema given', () => {
    const make = (max: number) => defineTool({ name: 'n', description: 'n', parameters: z.object({ n: z.number().refine((n) => n <= max, 'too big') }), execute: ({ n }) => String(n) });
    const small = make(1);
    const large = make(100);
    expect(small.validate?.({ n: 5 })).toMatchObject({ ok: false, error: 'arguments.n: too big' });
    expect(large.validate?.({ n: 5 })).toEqual({ ok: true, value: { n: 5 } });
  });

  it('a JSON Schema JSON cannot carry is still refused, even when one that looks equal was compiled', () => {
    defineTool({ name: 'f', description: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } } }, execute: () => '' });
    expect(() => defineTool({ name: 'f', description: 'f', parameters: { type: 'object', properties: { a: { type: 'string', check: () => true } } } as never, execute: () => '' }))
      .toThrow(/must be plain JSON/);
  });
});
