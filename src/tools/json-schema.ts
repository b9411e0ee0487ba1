import { dereference, type Schema, type SchemaDraft, Validator } from '@cfworker/json-schema';
import type { JsonSchema } from '../types/tool.js';
import { BoundedCache } from './bounded-cache.js';
import { jsonSchemaKey } from './schema-key.js';

/**
 * JSON Schema validation for tool arguments, on `@cfworker/json-schema`.
 *
 * Why that validator: it interprets the schema instead of generating code, so it needs no `eval`
 * or `new Function` and runs under a strict Content-Security-Policy in browsers and in edge
 * runtimes (Ajv compiles validators to JavaScript source and does not); it covers drafts 4, 7,
 * 2019-09 and 2020-12 with `$ref` (JSON pointers, `$id`, `$anchor`), `$defs` / `definitions`,
 * `if` / `then` / `else`, `oneOf`, `unevaluated*` and the common formats; and it has no
 * dependencies. The price is speed (an interpreter, not compiled code), which does not matter at
 * one validation per tool call.
 *
 * A schema is checked when it is compiled: every `$ref` must resolve, `type` must name JSON types,
 * keywords that take schemas must hold schemas, `required` must list strings and every `pattern`
 * must be a valid regular expression. A schema that fails is an error, never a tool run without
 * validation.
 */
export interface CompiledJsonSchema {
  /** `[]` when `value` is valid; otherwise one line per failure, `arguments.path: message`. */
  errors(value: unknown): string[];
}

/** A JSON Schema that cannot be used: `path` is a JSON pointer into it. */
export class JsonSchemaError extends Error {
  override readonly name = 'JsonSchemaError';
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path === '' ? 'schema' : `schema at ${path}`}: ${reason}`);
  }
}

const compiled = new WeakMap<object, CompiledJsonSchema>();

/**
 * Validators by the schema's structure (its JSON text): an equal schema made anew — a tool defined
 * inside a request handler, once per conversation — takes the validator an earlier one was compiled
 * to instead of being cloned, checked and compiled again. Bounded (the least recently used go first),
 * so schemas made per request with values of their own cannot make it grow without bound.
 */
const byStructure = new BoundedCache<CompiledJsonSchema>(512, 4_000_000);

/**
 * Checks a JSON Schema and makes its validator, once per schema object (a WeakMap cache, so a tool
 * definition used by many runs is compiled once) and once per structure (an equal schema made anew
 * gets the same validator). Throws JsonSchemaError naming the bad place.
 *
 * @example
 * const schema = compileJsonSchema({ type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] });
 * schema.errors({ n: 'x' }); // ['arguments.n: Instance type "string" is invalid. Expected "integer".']
 */
export function compileJsonSchema(schema: JsonSchema): CompiledJsonSchema {
  const cached = compiled.get(schema);
  if (cached) return cached;
  const key = jsonSchemaKey(schema);
  const equal = key === undefined ? undefined : byStructure.get(key);
  if (equal) {
    compiled.set(schema, equal);
    return equal;
  }
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) throw new JsonSchemaError('', 'must be an object');
  let copy: Schema;
  try {
    copy = structuredClone(schema) as Schema; // the validator annotates the objects it is given
  } catch {
    throw new JsonSchemaError('', 'must be plain JSON (it holds functions or other values JSON cannot carry)');
  }
  const draft = draftOf(copy);
  checkSubschema(copy, '');
  let lookup: Record<string, Schema | boolean>;
  try {
    lookup = dereference(copy);
  } catch (e) {
    throw new JsonSchemaError('', (e as Error).message);
  }
  checkRefs(copy, '', lookup, new Set());
  const validator = new Validator(copy, draft, false);
  const result: CompiledJsonSchema = { errors: (value) => describeErrors(validator, value) };
  compiled.set(schema, result);
  if (key !== undefined) byStructure.set(key, result);
  return result;
}

function draftOf(schema: Schema): SchemaDraft {
  const id = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (id.includes('draft-04')) return '4';
  if (id.includes('draft-06') || id.includes('draft-07')) return '7';
  if (id.includes('2019-09')) return '2019-09';
  return '2020-12';
}

const JSON_TYPES = new Set(['array', 'boolean', 'integer', 'null', 'number', 'object', 'string']);
const SCHEMA_KEYWORDS = ['not', 'if', 'then', 'else', 'additionalProperties', 'unevaluatedProperties', 'propertyNames', 'contains', 'additionalItems', 'unevaluatedItems'];
const SCHEMA_LIST_KEYWORDS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_MAP_KEYWORDS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];

function isSchema(value: unknown): value is Schema | boolean {
  return typeof value === 'boolean' || (value !== null && typeof value === 'object' && !Array.isArray(value));
}

/** The keywords that are easy to get wrong by hand, checked all the way down. */
function checkSubschema(schema: unknown, at: string): void {
  if (!isSchema(schema)) throw new JsonSchemaError(at, `expected a schema (an object or a boolean), got ${describe(schema)}`);
  if (typeof schema === 'boolean') return;
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  for (const t of types) if (typeof t !== 'string' || !JSON_TYPES.has(t)) throw new JsonSchemaError(`${at}/type`, `unknown type ${JSON.stringify(t)}`);
  if (schema.required !== undefined && (!Array.isArray(schema.required) || schema.required.some((r) => typeof r !== 'string'))) {
    throw new JsonSchemaError(`${at}/required`, 'must be an array of property names');
  }
  if (schema.enum !== undefined && !Array.isArray(schema.enum)) throw new JsonSchemaError(`${at}/enum`, 'must be an array');
  if (schema.pattern !== undefined) checkPattern(schema.pattern, `${at}/pattern`);
  if (schema.$ref !== undefined && typeof schema.$ref !== 'string') throw new JsonSchemaError(`${at}/$ref`, 'must be a string');
  for (const k of SCHEMA_KEYWORDS) if (schema[k] !== undefined) checkSubschema(schema[k], `${at}/${k}`);
  for (const k of SCHEMA_LIST_KEYWORDS) {
    if (schema[k] === undefined) continue;
    if (!Array.isArray(schema[k])) throw new JsonSchemaError(`${at}/${k}`, 'must be an array of schemas');
    (schema[k] as unknown[]).forEach((s, i) => checkSubschema(s, `${at}/${k}/${i}`));
  }
  for (const k of SCHEMA_MAP_KEYWORDS) {
    const map = schema[k] as unknown;
    if (map === undefined) continue;
    if (map === null || typeof map !== 'object' || Array.isArray(map)) throw new JsonSchemaError(`${at}/${k}`, 'must be an object of schemas');
    for (const [name, s] of Object.entries(map)) {
      if (k === 'patternProperties') checkPattern(name, `${at}/${k}/${pointerToken(name)}`);
      checkSubschema(s, `${at}/${k}/${pointerToken(name)}`);
    }
  }
  if (Array.isArray(schema.items)) schema.items.forEach((s, i) => checkSubschema(s, `${at}/items/${i}`));
  else if (schema.items !== undefined) checkSubschema(schema.items, `${at}/items`);
}

function checkPattern(pattern: unknown, at: string): void {
  if (typeof pattern !== 'string') throw new JsonSchemaError(at, 'must be a string');
  try {
    new RegExp(pattern, 'u');
  } catch (e) {
    throw new JsonSchemaError(at, `invalid regular expression (${(e as Error).message})`);
  }
}

/** Every `$ref` must point at a schema the document (or its `$id`s) defines. */
function checkRefs(schema: unknown, at: string, lookup: Record<string, Schema | boolean>, seen: Set<object>): void {
  if (schema === null || typeof schema !== 'object' || seen.has(schema)) return;
  seen.add(schema);
  if (Array.isArray(schema)) {
    schema.forEach((s, i) => checkRefs(s, `${at}/${i}`, lookup, seen));
    return;
  }
  const s = schema as Schema;
  if (typeof s.$ref === 'string') {
    const target = s.__absolute_ref__ ?? s.$ref;
    if (lookup[target] === undefined && resolvePointer(lookup, target) === undefined) {
      throw new JsonSchemaError(`${at}/$ref`, `unresolved $ref "${s.$ref}"`);
    }
  }
  for (const [k, v] of Object.entries(s)) if (k !== 'enum' && k !== 'const' && k !== 'default' && k !== 'examples') checkRefs(v, `${at}/${pointerToken(k)}`, lookup, seen);
}

/** A pointer into a known document that dereference did not list (e.g. into an `enum` array). */
function resolvePointer(lookup: Record<string, Schema | boolean>, uri: string): unknown {
  const hash = uri.indexOf('#');
  if (hash < 0) return undefined;
  let node: unknown = lookup[uri.slice(0, hash)];
  const pointer = decodeURIComponent(uri.slice(hash + 1));
  if (pointer === '') return node;
  for (const token of pointer.split('/').slice(1)) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[token.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

function pointerToken(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? `the string ${JSON.stringify(value)}` : typeof value;
}

/** The leaf failures of a validation, as `arguments.a[0].b: message` (wrappers like "A subschema had errors." left out). */
function describeErrors(validator: Validator, value: unknown): string[] {
  const result = validator.validate(value);
  if (result.valid) return [];
  const leaves = result.errors.filter((e) => !WRAPPER_KEYWORDS.has(e.keyword) || result.errors.length === 1);
  const lines = (leaves.length > 0 ? leaves : result.errors).map(describeError);
  return [...new Set(lines)];
}

const MISSING = /^Instance does not have required property "(.*)"\.$/s;

/** One failure as a line; a missing required property is reported where it is missing, not at its parent. */
function describeError(e: { instanceLocation: string; keyword: string; error: string }): string {
  const missing = e.keyword === 'required' ? MISSING.exec(e.error) : null;
  if (missing) return `${instancePath(e.instanceLocation)}${propertyPath(missing[1]!)}: required property ${JSON.stringify(missing[1])} is missing`;
  return `${instancePath(e.instanceLocation)}: ${e.error}`;
}

function propertyPath(name: string): string {
  return /^\d+$/.test(name) ? `[${name}]` : `.${name}`;
}

/** Keywords whose error only says that something below them failed; the failure below is reported. */
const WRAPPER_KEYWORDS = new Set(['properties', 'items', 'prefixItems', 'false', 'patternProperties', 'allOf', '$ref', 'if', 'then', 'else', 'dependentSchemas', 'unevaluatedProperties', 'unevaluatedItems', 'contains']);

function instancePath(location: string): string {
  let out = 'arguments';
  for (const raw of location.replace(/^#/, '').split('/').slice(1)) {
    const token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(token) ? `[${token}]` : `.${token}`;
  }
  return out;
}
