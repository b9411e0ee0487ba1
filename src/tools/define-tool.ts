import { z } from 'zod';
import type { ArgsValidation, JsonSchema, Tool, ToolContext, ToolExecution } from '../types/tool.js';
import { formatPath } from '../types/schemas.js';
import { TOOL_NAME_PATTERN } from './tool-name.js';

export interface ToolSpec<S> {
  name: string;
  label?: string;
  description: string;
  /** A zod schema, or a raw JSON Schema object. */
  parameters: S;
  execute(args: ArgsOf<S>, ctx: ToolContext): ToolExecution;
  timeoutMs?: number;
}

type ArgsOf<S> = S extends z.ZodType ? z.output<S> : Record<string, unknown>;

/**
 * Makes a Tool from a zod schema or a JSON Schema. Arguments are validated before `execute`;
 * a failure becomes an invalid-arguments result naming the path, so the model can correct itself.
 *
 * @example
 * const add = defineTool({
 *   name: 'add',
 *   description: 'Adds two numbers',
 *   parameters: z.object({ a: z.number(), b: z.number() }),
 *   execute: ({ a, b }) => String(a + b),
 * });
 */
export function defineTool<S extends z.ZodType | JsonSchema>(spec: ToolSpec<S>): Tool<ArgsOf<S>> {
  if (!TOOL_NAME_PATTERN.test(spec.name)) {
    throw new TypeError(`defineTool: name "${spec.name}" must be 1-64 characters of [a-zA-Z0-9_-]`);
  }
  const schema = toZod(spec.parameters);
  const tool: Tool<ArgsOf<S>> = {
    name: spec.name,
    label: spec.label ?? spec.name,
    description: spec.description,
    parameters: toJsonSchema(spec.parameters),
    validate: (args: unknown) => validateWith<ArgsOf<S>>(schema, args),
    execute: spec.execute,
  };
  if (spec.timeoutMs !== undefined) tool.timeoutMs = spec.timeoutMs;
  return tool;
}

function isZod(s: unknown): s is z.ZodType {
  return s instanceof z.ZodType;
}

function toJsonSchema(s: z.ZodType | JsonSchema): JsonSchema {
  if (!isZod(s)) return s;
  const { $schema: _ignored, ...schema } = z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  return schema;
}

function toZod(s: z.ZodType | JsonSchema): z.ZodType | undefined {
  if (isZod(s)) return s;
  try {
    return z.fromJSONSchema(s as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    // A schema zod cannot express is still sent to the model; we then only check for an object.
    return undefined;
  }
}

function validateWith<A>(schema: z.ZodType | undefined, args: unknown): ArgsValidation<A> {
  const input = args ?? {};
  if (schema === undefined) {
    return typeof input === 'object' && !Array.isArray(input)
      ? { ok: true, value: input as A }
      : { ok: false, error: 'arguments must be a JSON object' };
  }
  const parsed = schema.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data as A };
  return {
    ok: false,
    error: parsed.error.issues.map((i) => `${formatPath('arguments', i.path)}: ${i.message}`).join('; '),
  };
}
