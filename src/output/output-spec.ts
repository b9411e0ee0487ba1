import { AgentError } from '../types/errors.js';
import type { ResponseFormat } from '../types/provider.js';
import type { JsonSchema } from '../types/tool.js';
import { compileJsonSchema, JsonSchemaError } from '../tools/json-schema.js';
import { deriveJsonSchema, isStandardSchema, issuePath, type StandardSchemaV1 } from '../tools/standard-schema.js';

/**
 * Structured output: the schema a run's final answer must match. A zod schema (or any Standard
 * Schema), a JSON Schema object, or an {@link OutputSpec} made by {@link defineOutput}.
 */
export type OutputSchema = StandardSchemaV1 | OutputSpec<unknown> | JsonSchema;

/** The type of the output a schema describes: the Standard Schema's output type, `T` of an `OutputSpec<T>`, else `unknown`. */
export type OutputOf<S> = S extends OutputSpec<infer T> ? T : S extends StandardSchemaV1<unknown, infer O> ? O : unknown;

/** One way the output failed: where (`$`, `$.items[0].name`) and what. */
export interface OutputIssue {
  readonly path: string;
  readonly message: string;
}

/** An output that failed after its corrective turn: plain data, so that it survives transport and session records. */
export interface OutputFailure {
  readonly message: string;
  readonly issues: readonly OutputIssue[];
  /** The text of the answer that failed. */
  readonly text: string;
}

/**
 * Where a run's structured output stands (`LoopState.output`, `checkOutput`): `valid` with the value, `retrying`
 * after the one corrective turn was asked for, `invalid` when the answer after it failed again.
 */
export type OutputOutcome =
  | { readonly status: 'valid'; readonly value: unknown }
  | { readonly status: 'retrying'; readonly issues: readonly OutputIssue[] }
  | { readonly status: 'invalid'; readonly failure: OutputFailure };

export type OutputValidation<T> = { readonly value: T; readonly issues?: undefined } | { readonly issues: readonly OutputIssue[] };

/** A checked output schema: the JSON Schema sent to the model, and the validator of its answer. */
export interface OutputSpec<T = unknown> {
  readonly type: 'OutputSpec';
  /** The name the provider sees (`response_format.json_schema.name`, the output tool's name). */
  readonly name: string;
  readonly description?: string;
  readonly jsonSchema: JsonSchema;
  /** OpenAI's strict mode; default: whether the schema allows it (closed objects, every property required). */
  readonly strict: boolean;
  validate(value: unknown): OutputValidation<T> | Promise<OutputValidation<T>>;
}

export interface DefineOutputOptions {
  /** Default `output`; letters, digits, `_` and `-`, at most 64. */
  name?: string;
  description?: string;
  strict?: boolean;
  /** The JSON Schema to send, for a Standard Schema that cannot make its own (zod 3, valibot). */
  jsonSchema?: JsonSchema;
}

/** The error `agent.run(text, { output })` and `runOutput` reject with when the answer stayed invalid. */
export class InvalidOutputError extends AgentError {
  readonly issues: readonly OutputIssue[];
  readonly text: string;
  constructor(failure: OutputFailure) {
    super('InvalidOutput', failure.message);
    this.issues = failure.issues;
    this.text = failure.text;
  }
}

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const specs = new WeakMap<object, OutputSpec<unknown>>();

/**
 * Checks an output schema and makes its spec. Throws AgentError('InvalidConfig') naming
 * `config.output` when the schema is not one, is not a compilable JSON Schema of an object, or
 * (a Standard Schema) cannot say its JSON Schema.
 *
 * @example
 * const person = defineOutput<{ name: string }>({ type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }, { name: 'person' });
 * await agent.run('Who wrote Dune?', { output: person }); // { name: string }
 */
export function defineOutput<S extends StandardSchemaV1>(schema: S, options?: DefineOutputOptions): OutputSpec<OutputOf<S>>;
export function defineOutput<T = unknown>(schema: JsonSchema, options?: DefineOutputOptions): OutputSpec<T>;
export function defineOutput(schema: StandardSchemaV1 | JsonSchema, options: DefineOutputOptions = {}): OutputSpec<unknown> {
  const name = options.name ?? 'output';
  if (typeof name !== 'string' || !NAME.test(name)) throw invalid(`name ${JSON.stringify(name)}: expected 1 to 64 letters, digits, "_" or "-"`);
  if (schema === null || (typeof schema !== 'object' && typeof schema !== 'function')) throw invalid(`expected a zod / Standard Schema, a JSON Schema object or defineOutput(...), got ${schema === null ? 'null' : typeof schema}`);
  const standard = isStandardSchema(schema) ? schema : undefined;
  const derived = options.jsonSchema || !standard ? undefined : deriveJsonSchema(standard);
  if (derived && 'problem' in derived) {
    throw invalid(`cannot derive a JSON Schema from this ${standard!['~standard'].vendor} schema (${derived.problem}): pass one as defineOutput(schema, { jsonSchema })`);
  }
  const jsonSchema = options.jsonSchema ?? (derived ? derived.schema : (schema as JsonSchema));
  if (jsonSchema['type'] !== 'object') throw invalid(`the schema must describe an object (type "object"), got type ${JSON.stringify(jsonSchema['type'])}`);
  let compiled;
  try {
    compiled = compileJsonSchema(jsonSchema);
  } catch (e) {
    if (e instanceof JsonSchemaError) throw invalid(e.message);
    throw e;
  }
  const validate = standard ? standardValidator(standard) : (value: unknown): OutputValidation<unknown> => {
    const errors = compiled.errors(value);
    return errors.length === 0 ? { value } : { issues: errors.map(jsonSchemaIssue) };
  };
  return {
    type: 'OutputSpec',
    name,
    ...(options.description !== undefined ? { description: options.description } : {}),
    jsonSchema,
    strict: options.strict ?? allowsStrict(jsonSchema),
    validate,
  };
}

/** The spec of a `config.output` value, made once per schema object. Throws like {@link defineOutput}. */
export function outputSpecOf(output: OutputSchema): OutputSpec<unknown> {
  if (isOutputSpec(output)) return output;
  const known = specs.get(output);
  if (known) return known;
  const spec = defineOutput(output as JsonSchema);
  specs.set(output, spec);
  return spec;
}

/**
 * Checks `config.output` against the run's tools: the output tool of Anthropic and Bedrock carries
 * the output's name, so no tool may have it. Throws AgentError('InvalidConfig') naming both.
 */
export function checkOutputName(output: OutputSchema, tools: ReadonlyArray<{ readonly name: string }>): void {
  const { name } = outputSpecOf(output);
  const index = tools.findIndex((t) => t.name === name);
  if (index >= 0) throw invalid(`name "${name}" is also the name of tools[${index}]; give the output another name with defineOutput(schema, { name })`);
}

/** What the provider is asked for: `StreamRequest.responseFormat`. */
export function responseFormatOf(output: OutputSchema): ResponseFormat {
  const spec = outputSpecOf(output);
  return { name: spec.name, schema: spec.jsonSchema, strict: spec.strict, ...(spec.description !== undefined ? { description: spec.description } : {}) };
}

function isOutputSpec(value: unknown): value is OutputSpec<unknown> {
  return value !== null && typeof value === 'object' && (value as { type?: unknown }).type === 'OutputSpec' && typeof (value as OutputSpec).validate === 'function';
}

function standardValidator(schema: StandardSchemaV1): OutputSpec['validate'] {
  const toValidation = (result: Awaited<ReturnType<StandardSchemaV1['~standard']['validate']>>): OutputValidation<unknown> =>
    result.issues ? { issues: result.issues.map((i) => ({ path: pathString(issuePath(i)), message: i.message })) } : { value: result.value };
  return (value) => {
    const result = schema['~standard'].validate(value);
    return result instanceof Promise ? result.then(toValidation) : toValidation(result);
  };
}

/** `arguments.a[0].b: message` (compileJsonSchema's form) as `{ path: '$.a[0].b', message }`. */
function jsonSchemaIssue(line: string): OutputIssue {
  const at = line.indexOf(': ');
  return { path: `$${line.slice('arguments'.length, at)}`, message: line.slice(at + 2) };
}

/** Keys as a path: `$`, `$.items[0].name`. */
export function pathString(keys: readonly PropertyKey[]): string {
  let out = '$';
  for (const k of keys) out += typeof k === 'number' ? `[${k}]` : `.${String(k)}`;
  return out;
}

/** OpenAI's strict mode takes closed objects whose properties are all required, all the way down. */
function allowsStrict(schema: unknown): boolean {
  if (schema === null || typeof schema !== 'object') return true;
  if (Array.isArray(schema)) return schema.every(allowsStrict);
  const s = schema as Record<string, unknown>;
  if (s['type'] === 'object' || s['properties'] !== undefined) {
    const props = Object.keys((s['properties'] as object | undefined) ?? {});
    const required = Array.isArray(s['required']) ? (s['required'] as unknown[]) : [];
    if (s['additionalProperties'] !== false || props.some((p) => !required.includes(p))) return false;
  }
  return Object.entries(s).every(([k, v]) => {
    if (VALUE_KEYWORDS.has(k)) return true;
    if (SCHEMA_MAPS.has(k)) return v !== null && typeof v === 'object' && Object.values(v).every(allowsStrict);
    return allowsStrict(v);
  });
}

/** Keywords that hold values, not schemas. */
const VALUE_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'required']);
/** Keywords that hold a map of names to schemas. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

function invalid(reason: string): AgentError {
  return new AgentError('InvalidConfig', `config.output: ${reason}`);
}

/** The fields an AgentEnd gets from the outcome: `output` when valid, `outputError` when invalid. */
export function outputFields(outcome: OutputOutcome | undefined): { output?: unknown; outputError?: OutputFailure } {
  if (outcome?.status === 'valid') return { output: outcome.value };
  if (outcome?.status === 'invalid') return { outputError: outcome.failure };
  return {};
}
