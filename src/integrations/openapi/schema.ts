import type { JsonSchema } from '../../types/tool.js';

/** Keywords whose value is one schema. */
const SCHEMA_KEYWORDS = new Set(['items', 'additionalProperties', 'not', 'contains', 'if', 'then', 'else', 'propertyNames', 'additionalItems', 'unevaluatedProperties', 'unevaluatedItems']);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LIST_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords whose value maps names to schemas (the names are data, never filtered). */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** OpenAPI-only annotations that cost the model tokens and tell it nothing about the arguments. */
const DROPPED = new Set(['example', 'examples', 'xml', 'externalDocs', 'discriminator', 'nullable', '$schema', 'x-examples']);

/**
 * A dereferenced OpenAPI schema as plain JSON Schema for the model: a tree again (a recursive
 * schema is cut where it would repeat, since JSON cannot hold a cycle), OpenAPI 3.0's
 * `nullable: true` turned into a `null` type, and example/xml noise dropped.
 */
export function toModelSchema(schema: unknown): JsonSchema {
  const converted = convert(schema, []);
  return isObject(converted) ? converted : {};
}

function convert(schema: unknown, ancestors: object[]): unknown {
  if (typeof schema === 'boolean') return schema;
  if (!isObject(schema)) return {};
  if (ancestors.includes(schema)) return { description: 'Recursive: same structure as an enclosing object' };
  const path = [...ancestors, schema];
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DROPPED.has(key) || key.startsWith('x-')) continue;
    if (SCHEMA_LIST_KEYWORDS.has(key) || (SCHEMA_KEYWORDS.has(key) && Array.isArray(value))) {
      out[key] = Array.isArray(value) ? value.map((v) => convert(v, path)) : value;
    } else if (SCHEMA_KEYWORDS.has(key)) out[key] = convert(value, path);
    else if (SCHEMA_MAP_KEYWORDS.has(key) && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, v]) => [name, convert(v, path)]));
    } else out[key] = value;
  }
  if (schema.nullable === true) addNullType(out);
  return out;
}

function addNullType(schema: JsonSchema): void {
  const type = schema.type;
  if (typeof type === 'string') schema.type = type === 'null' ? type : [type, 'null'];
  else if (Array.isArray(type) && !type.includes('null')) schema.type = [...type, 'null'];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
