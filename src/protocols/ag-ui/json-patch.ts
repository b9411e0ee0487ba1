/** One JSON Patch operation (RFC 6902) of the kinds {@link jsonPatch} writes. */
export type JsonPatchOperation = { op: 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

/**
 * The JSON Patch (RFC 6902) that turns `from` into `to`, as AG-UI's STATE_DELTA carries it: objects
 * compared key by key (recursively), anything else (arrays included) replaced whole when its JSON
 * differs. Empty when they are equal as JSON.
 *
 * @example
 * jsonPatch({ a: 1, b: { c: 2 } }, { a: 1, b: { c: 3 }, d: [1] }); // [{ op: 'replace', path: '/b/c', value: 3 }, { op: 'add', path: '/d', value: [1] }]
 */
export function jsonPatch(from: unknown, to: unknown, path = ''): JsonPatchOperation[] {
  if (isObject(from) && isObject(to)) {
    const ops: JsonPatchOperation[] = [];
    for (const key of Object.keys(from)) {
      if (!(key in to) || to[key] === undefined) {
        if (from[key] !== undefined) ops.push({ op: 'remove', path: `${path}/${escape(key)}` });
      }
    }
    for (const [key, value] of Object.entries(to)) {
      if (value === undefined) continue;
      const at = `${path}/${escape(key)}`;
      if (!(key in from) || from[key] === undefined) ops.push({ op: 'add', path: at, value });
      else ops.push(...jsonPatch(from[key], value, at));
    }
    return ops;
  }
  if (JSON.stringify(from) === JSON.stringify(to)) return [];
  return [{ op: 'replace', path, value: to }];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A key as a JSON Pointer segment: `~` as `~0`, `/` as `~1`. */
function escape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
