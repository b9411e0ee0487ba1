import { z } from 'zod';
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
    readonly jsonSchema?: { input(options: { target: string }): Record<string, unknown> } | undefined;
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

/**
 * The JSON Schema the model is sent for a Standard Schema: the vendor's Standard JSON Schema
 * converter, zod 4's `toJSONSchema`, or a `toJsonSchema()` / `toJSONSchema()` method (arktype).
 * `undefined` when none is available (zod 3, valibot): then the tool must say it (`jsonSchema`).
 */
export function deriveJsonSchema(schema: StandardSchemaV1): JsonSchema | undefined {
  const props = schema['~standard'];
  let derived: unknown;
  if (props.jsonSchema && typeof props.jsonSchema.input === 'function') derived = props.jsonSchema.input({ target: 'draft-2020-12' });
  else if (schema instanceof z.ZodType || '_zod' in schema) derived = z.toJSONSchema(schema as z.ZodType, { io: 'input', unrepresentable: 'any' });
  else {
    const own = schema as { toJsonSchema?: () => unknown; toJSONSchema?: () => unknown };
    if (typeof own.toJsonSchema === 'function') derived = own.toJsonSchema();
    else if (typeof own.toJSONSchema === 'function') derived = own.toJSONSchema();
  }
  if (derived === undefined || derived === null || typeof derived !== 'object') return undefined;
  const { $schema: _dialect, ...rest } = derived as JsonSchema;
  return rest;
}

/** An issue's path as plain keys (Standard Schema allows `{ key }` segments). */
export function issuePath(issue: StandardIssue): PropertyKey[] {
  return (issue.path ?? []).map((p) => (typeof p === 'object' && p !== null ? p.key : p));
}
