/**
 * The process environment where there is one (Node, Bun, Deno's Node compatibility), else an
 * empty one: in a browser or worker, keys and endpoints are passed explicitly.
 */
export function runtimeEnv(): Record<string, string | undefined> {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return proc?.env ?? {};
}
