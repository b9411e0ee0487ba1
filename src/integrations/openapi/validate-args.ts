import { Validator } from '@cfworker/json-schema';
import type { OutputUnit, Schema, SchemaDraft } from '@cfworker/json-schema';
import { errorMessage } from '../../types/errors.js';
import type { ArgsValidation, JsonSchema } from '../../types/tool.js';

/** At most this many problems are listed in one message to the model. */
const MAX_LISTED = 5;

/**
 * Checks a tool's arguments against the JSON Schema made from its operation: types, formats the
 * validator knows, enums, bounds, required properties, nested bodies. The validator is
 * `@cfworker/json-schema`, which interprets schemas (no `eval`, no `new Function`). OpenAPI 3.1
 * schemas are read as JSON Schema 2020-12; OpenAPI 3.0 and Swagger 2.0 schemas (draft-04
 * dialects: boolean `exclusiveMinimum`) as draft 4.
 *
 * Throws when the schema cannot be compiled: a tool is never made without validation.
 */
export function argumentsValidator(schema: JsonSchema, draft: SchemaDraft, where: string): (args: unknown) => ArgsValidation<Record<string, unknown>> {
  let validator: Validator;
  try {
    validator = new Validator(schema as Schema, draft, false);
  } catch (error) {
    throw new Error(`the argument schema of ${where} cannot be compiled: ${errorMessage(error)}`, { cause: error });
  }
  return (args) => {
    const value = args ?? {};
    if (typeof value !== 'object' || Array.isArray(value)) return { ok: false, error: 'arguments must be a JSON object' };
    let errors: OutputUnit[];
    try {
      ({ errors } = validator.validate(value));
    } catch (error) {
      return { ok: false, error: `the arguments of ${where} could not be validated: ${errorMessage(error)}` };
    }
    if (errors.length === 0) return { ok: true, value: value as Record<string, unknown> };
    const leaves = innermost(errors);
    const listed = leaves.slice(0, MAX_LISTED).map(describe);
    const more = leaves.length > MAX_LISTED ? `; and ${leaves.length - MAX_LISTED} more` : '';
    return { ok: false, error: `invalid arguments: ${listed.join('; ')}${more}` };
  };
}

/** The validator reports every enclosing keyword too; keep the problems nothing else explains. */
function innermost(errors: OutputUnit[]): OutputUnit[] {
  const leaves = errors.filter((e) => !errors.some((other) => other !== e && other.keywordLocation.startsWith(`${e.keywordLocation}/`)));
  return leaves.length > 0 ? leaves : errors;
}

function describe(unit: OutputUnit): string {
  const at = unit.instanceLocation.replace(/^#/, '') || '/';
  return `${at}: ${unit.error}`;
}
