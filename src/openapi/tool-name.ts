/** Providers accept tool names of 1-64 characters from this set. */
const INVALID_CHARS = /[^a-zA-Z0-9_-]/g;
const MAX_LENGTH = 64;

/** `{prefix}__{operationId}` (or the operationId), with rejected characters replaced by `_`, cut to 64. */
export function operationToolName(operationId: string, prefix?: string): string {
  const full = prefix ? `${prefix}__${operationId}` : operationId;
  const clean = full.replace(INVALID_CHARS, '_').slice(0, MAX_LENGTH);
  return clean.length > 0 ? clean : '_';
}

/** Makes `name` unique among `taken` with a numeric suffix, still within 64 characters. */
export function uniqueName(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = name.slice(0, MAX_LENGTH - suffix.length) + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}
