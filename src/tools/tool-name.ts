/** The tool names providers accept: 1-64 characters of `[a-zA-Z0-9_-]`. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

const MAX_LENGTH = 64;
const INVALID_CHARS = /[^a-zA-Z0-9_-]/g;

/**
 * A name providers accept for a tool that comes from elsewhere (an MCP tool, an OpenAPI
 * operationId): `{prefix}__{name}` (or `name`), with rejected characters replaced by `_` and cut
 * to 64. The source is still called by its own name; only the model sees this one.
 *
 * @example
 * safeToolName('get pet/{id}', 'petstore'); // 'petstore__get_pet__id_'
 */
export function safeToolName(name: string, prefix?: string): string {
  const full = prefix ? `${prefix}__${name}` : name;
  const clean = full.replace(INVALID_CHARS, '_').slice(0, MAX_LENGTH);
  return clean.length > 0 ? clean : '_';
}

/** Makes `name` unique among `taken` with a numeric suffix, still within 64 characters. */
export function uniqueToolName(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = name.slice(0, MAX_LENGTH - suffix.length) + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}
