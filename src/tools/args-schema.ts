import type { JsonSchema } from '../types/tool.js';

/** The type-only key under which an ArgsSchema states its arguments' TypeScript type. */
export declare const ARGS: unique symbol;

/**
 * A JSON Schema that also states, for TypeScript, the arguments it accepts: `defineTool` gives
 * `execute` that type. phi-rx's own tools describe their arguments this way instead of with a zod
 * schema, so that importing them loads no schema library; the schema is validated as any JSON Schema
 * is (`@cfworker/json-schema`), and nothing checks at compile time that the type and the schema
 * agree: keep them side by side.
 *
 * @example
 * const parameters = argsSchema<{ path: string }>({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] });
 * defineTool({ name: 'read', description: 'Reads a file', parameters, execute: ({ path }) => path });
 */
export type ArgsSchema<A> = JsonSchema & { readonly [ARGS]?: A };

export function argsSchema<A>(schema: JsonSchema): ArgsSchema<A> {
  return schema;
}
