/**
 * A small kit of hand-written checks for JSON that phi-rx reads back (saved messages, sessions,
 * config files): each check takes a value and where it is, and returns the value as the library
 * uses it or throws a JsonCheckError naming the first bad place. Plain functions, nothing built at
 * import time, no validation library in the root's module graph (zod stays the user's own peer).
 *
 * Messages follow one style, `Invalid input: expected string, received number`, so that errors read
 * the same wherever they come from.
 */

/** A value failed a check: `path` is where, from the checked root; `problem` says what is wrong. */
export class JsonCheckError extends Error {
  override readonly name = 'JsonCheckError';
  constructor(
    readonly path: readonly PropertyKey[],
    readonly problem: string,
  ) {
    super(problem);
  }
}

/** Checks `value` found at `path` and returns it as the library uses it, or throws JsonCheckError. */
export type Check<T> = (value: unknown, path: readonly PropertyKey[]) => T;

export function fail(path: readonly PropertyKey[], problem: string): never {
  throw new JsonCheckError(path, problem);
}

/** `messages[3].content[0].type` from a root name and a path. */
export function formatPath(root: string, path: ReadonlyArray<PropertyKey>): string {
  let out = root;
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `.${String(p)}`;
  return out;
}

/** The outcome of a check, with the failure as `root.path: problem`. */
export type Checked<T> = { ok: true; value: T } | { ok: false; path: string; message: string; error: JsonCheckError };

/** Runs a check from the root, named `root` in the error. */
export function runCheck<T>(check: Check<T>, value: unknown, root: string): Checked<T> {
  try {
    return { ok: true, value: check(value, []) };
  } catch (e) {
    if (!(e instanceof JsonCheckError)) throw e;
    const path = formatPath(root, e.path);
    return { ok: false, path, message: `${path}: ${e.problem}`, error: e };
  }
}

/** How a value is named in `received …`. */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && !Number.isFinite(value)) return Number.isNaN(value) ? 'NaN' : 'Infinity';
  return typeof value;
}

export function invalidType(path: readonly PropertyKey[], expected: string, value: unknown): never {
  return fail(path, `Invalid input: expected ${expected}, received ${kindOf(value)}`);
}

export const string: Check<string> = (v, path) => (typeof v === 'string' ? v : invalidType(path, 'string', v));
export const number: Check<number> = (v, path) => (typeof v === 'number' && Number.isFinite(v) ? v : invalidType(path, 'number', v));
export const boolean: Check<boolean> = (v, path) => (typeof v === 'boolean' ? v : invalidType(path, 'boolean', v));
export const unknown: Check<unknown> = (v) => v;

/** A string of at least `min` characters. */
export function nonEmptyString(min = 1): Check<string> {
  return (v, path) => {
    const s = string(v, path);
    return s.length >= min ? s : fail(path, `Too small: expected string to have >=${min} characters`);
  };
}

/** A whole number ≥ `min` (when given). */
export function integer(min?: number): Check<number> {
  return (v, path) => {
    const n = number(v, path);
    if (!Number.isInteger(n)) return invalidType(path, 'int', v);
    return min === undefined || n >= min ? n : fail(path, `Too small: expected number to be >=${min}`);
  };
}

/** A number within bounds (`exclusiveMin`: strictly greater than `min`). */
export function bounded(min: number, max = Infinity, exclusiveMin = false): Check<number> {
  return (v, path) => {
    const n = number(v, path);
    if (exclusiveMin ? n <= min : n < min) return fail(path, `Too small: expected number to be ${exclusiveMin ? '>' : '>='}${min}`);
    return n <= max ? n : fail(path, `Too big: expected number to be <=${max}`);
  };
}

/** One of a few literal values (strings, numbers, booleans). */
export function oneOf<const V extends readonly (string | number | boolean)[]>(values: V): Check<V[number]> {
  return (v, path) => {
    if (values.includes(v as V[number])) return v as V[number];
    const listed = values.map((x) => JSON.stringify(x));
    return fail(path, values.length === 1 ? `Invalid input: expected ${listed[0]}` : `Invalid option: expected one of ${listed.join('|')}`);
  };
}

/** `undefined` passes as `undefined`; anything else must pass `check`. */
export function optional<T>(check: Check<T>): Check<T | undefined> {
  return (v, path) => (v === undefined ? undefined : check(v, path));
}

/** `undefined` becomes `fallback()`; anything else must pass `check`. */
export function withDefault<T>(check: Check<T>, fallback: () => T): Check<T> {
  return (v, path) => (v === undefined ? fallback() : check(v, path));
}

export function arrayOf<T>(item: Check<T>): Check<T[]> {
  return (v, path) => {
    if (!Array.isArray(v)) return invalidType(path, 'array', v);
    return v.map((x, i) => item(x, [...path, i]));
  };
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** An object used as a map: every value passes `value`. */
export function recordOf<T>(value: Check<T>): Check<Record<string, T>> {
  return (v, path) => {
    if (!isPlainObject(v)) return invalidType(path, 'record', v);
    const out: Record<string, T> = {};
    for (const [k, x] of Object.entries(v)) out[k] = value(x, [...path, k]);
    return out;
  };
}

export type Shape = Record<string, Check<unknown>>;
export type ShapeOutput<S extends Shape> = { [K in keyof S]: ReturnType<S[K]> };

/**
 * An object with known fields, checked in the order given. The result holds the checked fields only
 * (`undefined` ones left out). Unknown keys are dropped (`'strip'`), refused (`'strict'`: the error's
 * path ends at the first unknown key) or kept as they are (`'loose'`).
 */
export function object<S extends Shape>(shape: S, unknownKeys: 'strip' | 'strict' | 'loose' = 'strip'): Check<ShapeOutput<S>> {
  const keys = Object.keys(shape);
  return (v, path) => {
    if (!isPlainObject(v)) return invalidType(path, 'object', v);
    if (unknownKeys === 'strict') {
      const extra = Object.keys(v).find((k) => !(k in shape));
      if (extra !== undefined) fail([...path, extra], `unknown key ${JSON.stringify(extra)}`);
    }
    const out: Record<string, unknown> = unknownKeys === 'loose' ? { ...v } : {};
    for (const k of keys) {
      const checked = shape[k]!(v[k], [...path, k]);
      if (checked !== undefined) out[k] = checked;
      else delete out[k];
    }
    return out as ShapeOutput<S>;
  };
}

/**
 * Objects of several kinds told apart by one field (`type`, `role`, `kind`): a value whose tag is
 * none of them is reported at the tag with the tags allowed.
 */
export function tagged<T>(tag: string, kinds: Record<string, Check<T>>): Check<T> {
  const tags = Object.keys(kinds);
  return (v, path) => {
    if (!isPlainObject(v)) return invalidType(path, 'object', v);
    const kind = v[tag];
    const check = typeof kind === 'string' && Object.hasOwn(kinds, kind) ? kinds[kind] : undefined;
    if (!check) return fail([...path, tag], `Invalid input: expected one of ${tags.map((t) => JSON.stringify(t)).join('|')}`);
    return check(v, path);
  };
}
