/**
 * Keys that name a schema by its structure, so that an equal schema made anew (a tool defined
 * inside a request handler, once per conversation) finds what an earlier equal one was compiled
 * to. Two schemas with the same key describe the same JSON Schema; a schema whose structure
 * cannot be read safely has no key (`undefined`) and is only cached by identity.
 */

/** Values walked at most per key: a schema larger than this is cached by identity only. */
const MAX_TOKENS = 20_000;

/**
 * The key of a plain JSON value (a JSON Schema): its JSON text, properties in their order.
 * `undefined` for anything JSON cannot carry (functions, class instances, `undefined`, cycles,
 * non-finite numbers), which the compile step then reports as it always did.
 */
export function jsonSchemaKey(schema: unknown): string | undefined {
  const budget = { tokens: MAX_TOKENS };
  return jsonKey(schema, 0, budget);
}

/** Nesting deeper than this has no key (a cycle reaches it too). */
const MAX_DEPTH = 64;

function jsonKey(value: unknown, depth: number, budget: { tokens: number }): string | undefined {
  if (--budget.tokens < 0 || depth > MAX_DEPTH) return undefined;
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : undefined;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      return undefined;
  }
  let out: string;
  if (Array.isArray(value)) {
    out = '[';
    for (let i = 0; i < value.length; i++) {
      const item = jsonKey(value[i], depth + 1, budget);
      if (item === undefined) return undefined;
      out += i === 0 ? item : `,${item}`;
    }
    return `${out}]`;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return undefined;
  out = '{';
  let first = true;
  for (const key in value) {
    const field = (value as Record<string, unknown>)[key];
    if (field === undefined || !Object.hasOwn(value, key)) continue; // as JSON leaves it out
    const item = jsonKey(field, depth + 1, budget);
    if (item === undefined) return undefined;
    out += `${first ? '' : ','}${JSON.stringify(key)}:${item}`;
    first = false;
  }
  return `${out}}`;
}

/** Ids of functions met in a schema (a check's predicate, a transform): equal only when the same function. */
const functionIds = new WeakMap<object, number>();
let nextFunctionId = 0;

function functionId(fn: object): number {
  let id = functionIds.get(fn);
  if (id === undefined) functionIds.set(fn, (id = ++nextFunctionId));
  return id;
}

/** What a zod 4 schema (or check) carries: its definition, its class, and the schema it was cloned from. */
interface ZodNode {
  readonly _zod: { readonly def: unknown; readonly constr?: unknown; readonly parent?: unknown };
}

function isZodNode(value: object): value is ZodNode {
  const internals = (value as { _zod?: { def?: unknown } })._zod;
  return typeof internals === 'object' && internals !== null && typeof internals.def === 'object' && internals.def !== null;
}

/** zod 4's registry of `.describe()` / `.meta()` metadata, which its JSON Schema converter reads. */
interface ZodRegistry {
  get(schema: object): unknown;
}

function zodRegistry(): ZodRegistry | undefined {
  const registry = (globalThis as { __zod_globalRegistry?: Partial<ZodRegistry> }).__zod_globalRegistry;
  return registry && typeof registry.get === 'function' ? (registry as ZodRegistry) : undefined;
}

/**
 * The key of a zod 4 schema (`_zod.def`: what its JSON Schema converter reads), or `undefined` for
 * any other Standard Schema, and for a zod schema holding values this cannot compare by content.
 * Each node is keyed by its class, its definition (nested schemas, checks, formats, patterns,
 * literal values, all the way down), its metadata (`.describe()`, `.meta()`) and the schema it was
 * cloned from; a function in it (a refinement, a transform, a lazy getter) is compared by identity,
 * so a schema refined by a closure made anew is never taken for another.
 */
export function zodSchemaKey(schema: object): string | undefined {
  if (!isZodNode(schema)) return undefined;
  return new ZodKey(zodRegistry()).node(schema, 0);
}

/** One walk over a zod schema (see {@link zodSchemaKey}). */
class ZodKey {
  private tokens = MAX_TOKENS;
  /** The zod nodes from the root to where the walk is: a recursive schema points back up. */
  private readonly path: object[] = [];
  /** Definitions already keyed in this walk (a `.describe()` clone shares its parent's): keyed once. */
  private readonly defs = new Map<object, string>();

  constructor(private readonly registry: ZodRegistry | undefined) {}

  node(zod: ZodNode, depth: number): string | undefined {
    const back = this.path.indexOf(zod);
    if (back >= 0) return `^${this.path.length - back}`;
    this.path.push(zod);
    const internals = zod._zod;
    const seen = this.defs.get(internals.def as object);
    const def = seen ?? this.value(internals.def, depth + 1);
    if (seen === undefined && def !== undefined) this.defs.set(internals.def as object, `d${this.defs.size}`);
    const meta = def === undefined || this.registry === undefined ? '' : this.value(this.registry.get(zod), depth + 1);
    const parent = meta === undefined || internals.parent === undefined ? '' : this.value(internals.parent, depth + 1);
    this.path.pop();
    if (def === undefined || meta === undefined || parent === undefined) return undefined;
    const constr = typeof internals.constr === 'function' ? functionId(internals.constr) : 0;
    return `<${constr}${def}m${meta}p${parent}>`;
  }

  value(value: unknown, depth: number): string | undefined {
    if (--this.tokens < 0 || depth > MAX_DEPTH) return undefined;
    if (value === null) return 'null';
    switch (typeof value) {
      case 'undefined':
        return '';
      case 'string':
        return JSON.stringify(value);
      case 'number':
      case 'boolean':
        return String(value);
      case 'bigint':
        return `${value}n`;
      case 'function':
        return `f${functionId(value)}`;
      case 'object':
        break;
      default:
        return undefined; // a symbol
    }
    if (value instanceof RegExp) return `/${value.source}/${value.flags}`;
    if (isZodNode(value)) return this.node(value, depth);
    let out: string;
    if (Array.isArray(value)) {
      out = '[';
      for (let i = 0; i < value.length; i++) {
        const item = this.value(value[i], depth + 1);
        if (item === undefined) return undefined;
        out += `${item},`;
      }
      return `${out}]`;
    }
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) return undefined; // a Date, a Map, a class of its own: not compared by content here
    out = '{';
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      const item = this.value((value as Record<string, unknown>)[key], depth + 1);
      if (item === undefined) return undefined;
      out += `${JSON.stringify(key)}:${item},`;
    }
    return `${out}}`;
  }
}
