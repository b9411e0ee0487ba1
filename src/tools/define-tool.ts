import type { ApprovalPredicate, ArgsValidation, JsonSchema, Tool, ToolContext, ToolExecution } from '../types/tool.js';
import { AgentError } from '../types/errors.js';
import { formatPath } from '../types/json-check.js';
import { TOOL_NAME_PATTERN } from './tool-name.js';
import { compileJsonSchema, JsonSchemaError } from './json-schema.js';
import { deriveJsonSchema, type DerivedJsonSchema, isStandardSchema, issuePath, type StandardSchemaV1 } from './standard-schema.js';
import type { ARGS } from './args-schema.js';
import { BoundedCache } from './bounded-cache.js';
import { zodSchemaKey } from './schema-key.js';

export interface ToolSpec<S> {
  name: string;
  label?: string;
  description: string;
  /**
   * The arguments: a Standard Schema (zod 3.24+ and 4, valibot, arktype, …), validated through its
   * own `validate`, or a raw JSON Schema object (drafts 4, 7, 2019-09, 2020-12), validated with
   * `@cfworker/json-schema`. Either way invalid arguments never reach `execute`.
   */
  parameters: S;
  /**
   * The JSON Schema the model is sent. Derived when absent, from what the schema itself offers (phi-rx
   * imports no schema library): the vendor's Standard JSON Schema converter (zod 4.2+), a
   * `toJsonSchema()` method (arktype), or `parameters` itself when it is JSON Schema. Required for a
   * schema that cannot describe itself (zod 3, `zod/mini`: use its `toJSONSchema`; valibot: use
   * `@valibot/to-json-schema`); validation still goes through `parameters`.
   */
  jsonSchema?: JsonSchema;
  execute(args: ArgsOf<S>, ctx: ToolContext): ToolExecution;
  timeoutMs?: number;
  /** Calls wait for approval before `execute`: always, or when the predicate over the arguments (typed as `execute`'s) says so. */
  needsApproval?: boolean | ApprovalPredicate<ArgsOf<S>>;
  /** An approval may run the call with edited arguments (off by default): see Tool's `allowEdits`. */
  allowEdits?: boolean;
}

/** The arguments `execute` gets: a Standard Schema's output, an ArgsSchema's stated type, else a plain object. */
export type ArgsOf<S> = S extends StandardSchemaV1<unknown, infer O>
  ? O
  : S extends { readonly [ARGS]?: infer A }
    ? unknown extends A ? Record<string, unknown> : A
    : Record<string, unknown>;

/**
 * Makes a Tool from a Standard Schema (zod, valibot, arktype …) or a JSON Schema. Arguments are
 * validated before `execute`; a failure becomes an invalid-arguments result naming the path, so
 * the model can correct itself. A definition that cannot work (a bad name, no `execute`, a JSON
 * Schema that does not compile or does not describe an object, a schema with no JSON Schema for
 * the model) throws an AgentError (`InvalidTool`) naming the tool.
 *
 * @example
 * const add = defineTool({
 *   name: 'add',
 *   description: 'Adds two numbers',
 *   parameters: z.object({ a: z.number(), b: z.number() }),
 *   execute: ({ a, b }) => String(a + b),
 * });
 */
export function defineTool<S extends StandardSchemaV1 | JsonSchema>(spec: ToolSpec<S>): Tool<ArgsOf<S>> {
  if (typeof spec.name !== 'string' || !TOOL_NAME_PATTERN.test(spec.name)) {
    throw new TypeError(`defineTool: name "${String(spec.name)}" must be 1-64 characters of [a-zA-Z0-9_-]`);
  }
  const fail = (reason: string): never => {
    throw new AgentError('InvalidTool', `defineTool "${spec.name}": ${reason}`);
  };
  if (typeof spec.execute !== 'function') fail('execute must be a function');
  const params: unknown = spec.parameters;
  const standard = isStandardSchema(params) ? params : undefined;
  if (!standard && (params === null || typeof params !== 'object' || Array.isArray(params))) {
    fail(`parameters must be a Standard Schema (zod, valibot, arktype …) or a JSON Schema object, got ${params === null ? 'null' : typeof params}`);
  }
  if (!standard && typeof (params as { safeParse?: unknown }).safeParse === 'function') {
    fail('parameters look like a zod schema without Standard Schema support (zod older than 3.24): upgrade zod, or pass a JSON Schema');
  }
  let jsonSchema = spec.jsonSchema ?? (standard ? undefined : (params as JsonSchema));
  if (jsonSchema === undefined) {
    const derived = derivedSchema(standard!);
    if ('problem' in derived) fail(`cannot derive a JSON Schema for the model from this ${standard!['~standard'].vendor} schema (${derived.problem}): pass it as \`jsonSchema\``);
    else jsonSchema = derived.schema;
  }
  const compiled = compileOrFail(jsonSchema!, fail);
  const validate = standard ? (args: unknown) => validateStandard<ArgsOf<S>>(standard, args) : (jsonValidator(compiled) as (args: unknown) => ArgsValidation<ArgsOf<S>>);
  const tool: Tool<ArgsOf<S>> = {
    name: spec.name,
    label: spec.label ?? spec.name,
    description: spec.description,
    parameters: jsonSchema!,
    validate,
    execute: spec.execute,
  };
  if (spec.timeoutMs !== undefined) tool.timeoutMs = spec.timeoutMs;
  if (spec.needsApproval !== undefined) {
    if (typeof spec.needsApproval !== 'boolean' && typeof spec.needsApproval !== 'function') fail(`needsApproval must be a boolean or a function, got ${typeof spec.needsApproval}`);
    tool.needsApproval = spec.needsApproval;
  }
  if (spec.allowEdits !== undefined) {
    if (typeof spec.allowEdits !== 'boolean') fail(`allowEdits must be a boolean, got ${typeof spec.allowEdits}`);
    tool.allowEdits = spec.allowEdits;
  }
  return tool;
}

/** JSON Schemas derived from Standard Schemas, once per schema object (made on the first defineTool). */
let derived: WeakMap<object, DerivedJsonSchema> | undefined;

/**
 * The same by the schema's structure (zod 4: see `zodSchemaKey`), so that an equal schema made anew —
 * a tool defined inside a request handler — is not converted again (zod's converter takes hundreds of
 * µs). Bounded, the least recently used first to go. The JSON Schemas are frozen: tools share them.
 */
const derivedByStructure = new BoundedCache<DerivedJsonSchema>(512, 4_000_000);

function derivedSchema(schema: StandardSchemaV1): DerivedJsonSchema {
  derived ??= new WeakMap();
  let json = derived.get(schema);
  if (json === undefined) {
    const key = zodSchemaKey(schema);
    json = key === undefined ? undefined : derivedByStructure.get(key);
    if (json === undefined) {
      json = deriveJsonSchema(schema);
      if ('schema' in json) deepFreeze(json.schema);
      if (key !== undefined) derivedByStructure.set(key, json);
    }
    derived.set(schema, json);
  }
  return json;
}

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
}

/** One validate function per compiled JSON Schema: tools with equal schemas share it. */
const jsonValidators = new WeakMap<object, (args: unknown) => ArgsValidation<unknown>>();

function jsonValidator(schema: ReturnType<typeof compileJsonSchema>): (args: unknown) => ArgsValidation<unknown> {
  let validate = jsonValidators.get(schema);
  if (validate === undefined) jsonValidators.set(schema, (validate = (args: unknown) => validateJson(schema, args)));
  return validate;
}

/**
 * Checks that a tool's JSON Schema compiles and describes an object (what every provider requires
 * of tool parameters). Shared by `defineTool` and the run-start check of hand-made tools.
 */
export function checkParametersSchema(schema: unknown): string | undefined {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return `parameters must be a JSON Schema object, got ${schema === null ? 'null' : Array.isArray(schema) ? 'an array' : typeof schema}`;
  const type = (schema as JsonSchema).type;
  if (type !== 'object') return `parameters must be an object schema ({ type: 'object', … }), got type ${JSON.stringify(type) ?? 'undefined'}`;
  try {
    compileJsonSchema(schema as JsonSchema);
  } catch (e) {
    if (e instanceof JsonSchemaError) return `parameters: ${e.message}`;
    throw e;
  }
  return undefined;
}

function compileOrFail(schema: JsonSchema, fail: (reason: string) => never): ReturnType<typeof compileJsonSchema> {
  const problem = checkParametersSchema(schema);
  if (problem) fail(problem);
  return compileJsonSchema(schema);
}

function validateJson<A>(schema: ReturnType<typeof compileJsonSchema>, args: unknown): ArgsValidation<A> {
  const input = args ?? {};
  const errors = schema.errors(input);
  return errors.length === 0 ? { ok: true, value: input as A } : { ok: false, error: errors.join('; ') };
}

function validateStandard<A>(schema: StandardSchemaV1, args: unknown): ArgsValidation<A> {
  const result = schema['~standard'].validate(args ?? {});
  if (result instanceof Promise) {
    return { ok: false, error: 'the tool\'s parameters schema validates asynchronously, which tool arguments do not support: use a synchronous schema' };
  }
  if (result.issues) return { ok: false, error: result.issues.map((i) => `${formatPath('arguments', issuePath(i))}: ${i.message}`).join('; ') };
  return { ok: true, value: result.value as A };
}
