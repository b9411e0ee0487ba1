/**
 * Structural equality for test assertions, with no dependency on Node: plain objects and arrays
 * compared key by key, `NaN` equal to itself, `Date`s by time, anything else by `Object.is`.
 * Returns the path of the first difference (`$[3].notification.value`), or `undefined` when equal.
 */
export function firstDifference(actual: unknown, expected: unknown, path = '$'): string | undefined {
  if (Object.is(actual, expected)) return undefined;
  if (typeof actual !== 'object' || typeof expected !== 'object' || actual === null || expected === null) return path;
  if (Array.isArray(actual) !== Array.isArray(expected)) return path;
  if (Object.getPrototypeOf(actual) !== Object.getPrototypeOf(expected)) return path;
  if (actual instanceof Date) return actual.getTime() === (expected as Date).getTime() ? undefined : path;
  const a = actual as Record<string, unknown>;
  const e = expected as Record<string, unknown>;
  const keys = new Set([...Object.keys(a), ...Object.keys(e)]);
  for (const key of keys) {
    const child = Array.isArray(actual) ? `${path}[${key}]` : `${path}.${key}`;
    if (Object.hasOwn(a, key) !== Object.hasOwn(e, key)) return child;
    const diff = firstDifference(a[key], e[key], child);
    if (diff !== undefined) return diff;
  }
  return undefined;
}

/** Throws an Error naming the first differing path and showing both sides as JSON. */
export function assertDeepEqual(actual: unknown, expected: unknown): void {
  const at = firstDifference(actual, expected);
  if (at === undefined) return;
  throw new Error(`values differ at ${at}\nactual:   ${show(actual)}\nexpected: ${show(expected)}`);
}

function show(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
