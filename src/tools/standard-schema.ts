import type { JsonSchema } from '../types/tool.js';

/**
 * The Standard Schema interface (https://standardschema.dev, v1), written out here so that phi-rx
 * needs no extra package: zod 3.24+ and 4, valibot 1, arktype 2 and others implement it. An
 * optional `jsonSchema` converter is the Standard JSON Schema extension (zod 4.2+ has it).
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    validate(value: unknown): StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    readonly jsonSchema?: { input(options: { target: string; libraryOptions?: Record<string, unknown> }): Record<string, unknown> } | undefined;
  };
}

export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardIssue> };

export interface StandardIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false;
  const props = (value as { '~standard'?: { validate?: unknown } })['~standard'];
  return typeof props === 'object' && props !== null && typeof props.validate === 'function';
}

/** What deriving a model JSON Schema from a Standard Schema found. */
export type DerivedJsonSchema = { schema: JsonSchema } | { problem: string };

/**
 * The JSON Schema the model is sent for a Standard Schema, from what the schema itself offers, so
 * that phi-rx imports no schema library: the vendor's Standard JSON Schema converter
 * (`~standard.jsonSchema`, zod 4.2+), else a `toJSONSchema()` / `toJsonSchema()` method (arktype,
 * zod classic). A schema with neither (zod 3, `zod/mini`, valibot) is a problem to report: the tool
 * must then say it (`jsonSchema`). A converter that throws (a zod `z.date()`, a transform's output)
 * is a problem too, with its reason.
 */
export function deriveJsonSchema(schema: StandardSchemaV1): DerivedJsonSchema {
  const props = schema['~standard'];
  const own = schema as { toJsonSchema?: () => unknown; toJSONSchema?: (options?: Record<string, unknown>) => unknown };
  let derived: unknown;
  try {
    if (props.jsonSchema && typeof props.jsonSchema.input === 'function') derived = props.jsonSchema.input({ target: 'draft-2020-12' });
    else if (typeof own.toJsonSchema === 'function') derived = own.toJsonSchema();
    else if (typeof own.toJSONSchema === 'function') derived = own.toJSONSchema({ io: 'input' });
    else return { problem: noConverter(props.vendor, schema) };
  } catch (e) {
    return { problem: `its converter failed: ${(e as Error).message}` };
  }
  if (derived === null || typeof derived !== 'object' || Array.isArray(derived)) return { problem: 'its converter returned no JSON Schema object' };
  const { $schema: _dialect, ...rest } = derived as JsonSchema;
  return { schema: rest };
}

function noConverter(vendor: string, schema: object): string {
  if (vendor === 'zod' && '_zod' in schema) return 'zod/mini schemas, and zod before 4.2, carry no converter: use `toJSONSchema(schema)` from zod';
  return 'it carries no JSON Schema converter';
}

/** An issue's path as plain keys (Standard Schema allows `{ key }` segments). */
export function issuePath(issue: StandardIssue): PropertyKey[] {
  return (issue.path ?? []).map((p) => (typeof p === 'object' && p !== null ? p.key : p));
}
