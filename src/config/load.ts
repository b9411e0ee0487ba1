import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadOptionalPeer } from '../util/optional-peer.js';
import { LineCounter, parseDocument, isNode } from 'yaml';
import { agentFileCheck, NOT_SUPPORTED_YET, type AgentFile } from './schema.js';
import { JsonCheckError } from '../types/json-check.js';

/** A config file that cannot be used: names the file, the key path and, where known, the line. */
export class AgentConfigError extends Error {
  override readonly name = 'AgentConfigError';
  constructor(
    readonly file: string,
    /** `model.apiKey`, `openapi[1].spec`; empty for the file as a whole. */
    readonly keyPath: string,
    readonly line: number | undefined,
    readonly problem: string,
  ) {
    super(`${file}${line !== undefined ? `:${line}` : ''}: ${keyPath ? `${keyPath}: ` : ''}${problem}`);
  }
}

export interface LoadConfigOptions {
  /** Where `${NAME}` references resolve (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** A validated config file, with the values its `${ENV}` references brought in kept apart. */
export interface LoadedAgentConfig {
  file: string;
  config: AgentFile;
  /** The values read from the environment: never print them (see `redact`). */
  readonly secrets: readonly string[];
  /** The text with every environment-derived value replaced by `****`. */
  redact(text: string): string;
  /** An `AgentConfigError` about a key of this file (line included where known). */
  errorAt(at: ReadonlyArray<string | number>, problem: string): AgentConfigError;
}

type Path = Array<string | number>;
/** The formats of an agent file, by extension: `.toml`, `.yaml` / `.yml`, `.json`. */
export type AgentConfigFormat = 'toml' | 'yaml' | 'json';
type Format = AgentConfigFormat;

/**
 * Reads an agent config file (TOML, YAML or JSON, by extension), resolves `${NAME}` references
 * from the environment, and validates it. Every failure is an `AgentConfigError` naming the
 * file, the key path and (where the parser knows it) the line; values read from the environment
 * never appear in it.
 *
 * @example
 * const { config } = await loadAgentConfig('agent.toml');
 */
export async function loadAgentConfig(file: string, options: LoadConfigOptions = {}): Promise<LoadedAgentConfig> {
  const format = formatOf(file);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new AgentConfigError(file, '', undefined, `cannot read the file (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  return parseAgentConfig(text, file, format, options);
}

/**
 * `loadAgentConfig` on text you already have; `file` names it in errors and picks the format.
 * TOML needs the optional peer `smol-toml` (loaded on first use; missing, it is a
 * `MissingPeerDependencyError` naming it); YAML and JSON need nothing more.
 */
export async function parseAgentConfig(text: string, file: string, format: AgentConfigFormat = formatOf(file), options: LoadConfigOptions = {}): Promise<LoadedAgentConfig> {
  const toml = format === 'toml' ? await loadOptionalPeer('smol-toml', 'phi-rx/config (TOML files)', () => import('smol-toml')) : undefined;
  const raw = parseText(text, file, format, toml);
  const lineOf = lineFinder(text, format);
  const secrets: string[] = [];
  const resolved = resolveEnv(raw, [], options.env ?? process.env, secrets, (p, problem) => new AgentConfigError(file, keyPathOf(p), lineOf(p), problem));
  if (resolved && typeof resolved === 'object' && !Array.isArray(resolved)) {
    for (const key of Object.keys(resolved)) {
      const why = NOT_SUPPORTED_YET[key];
      if (why) throw new AgentConfigError(file, key, lineOf([key]), `${why}; remove this key`);
    }
  }
  const redact = (s: string): string => secrets.reduce((out, secret) => (secret ? out.split(secret).join('****') : out), s);
  let config: AgentFile;
  try {
    config = agentFileCheck()(resolved, []);
  } catch (e) {
    if (!(e instanceof JsonCheckError)) throw e;
    const at = e.path.filter((k): k is string | number => typeof k !== 'symbol');
    throw new AgentConfigError(file, keyPathOf(at), lineOf(at), redact(e.problem));
  }
  const errorAt = (at: ReadonlyArray<string | number>, problem: string): AgentConfigError =>
    new AgentConfigError(file, keyPathOf(at), lineOf([...at]), redact(problem));
  return { file, config, secrets, redact, errorAt };
}

function formatOf(file: string): Format {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.toml') return 'toml';
  if (ext === '.yaml' || ext === '.yml') return 'yaml';
  if (ext === '.json') return 'json';
  throw new AgentConfigError(file, '', undefined, `unknown config format "${ext}": use .toml, .yaml, .yml or .json`);
}

function parseText(text: string, file: string, format: Format, toml: typeof import('smol-toml') | undefined): unknown {
  if (toml) {
    try {
      return toml.parse(text);
    } catch (e) {
      if (e instanceof toml.TomlError) throw new AgentConfigError(file, '', e.line, `invalid TOML: ${e.message.split('\n')[0]}`);
      throw e;
    }
  }
  if (format === 'json') {
    try {
      return JSON.parse(text) as unknown;
    } catch (e) {
      const lines = new LineCounter();
      const doc = parseDocument(text, { lineCounter: lines });
      const at = doc.errors[0] ? lines.linePos(doc.errors[0].pos[0]).line : undefined;
      throw new AgentConfigError(file, '', at, `invalid JSON: ${(e as Error).message}`);
    }
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  const error = doc.errors[0];
  if (error) throw new AgentConfigError(file, '', lines.linePos(error.pos[0]).line, `invalid YAML: ${error.message.split('\n')[0]}`);
  return doc.toJS() as unknown;
}

/** Replaces `${NAME}` in every string; whole-string references keep the value apart as a secret. */
function resolveEnv(
  value: unknown,
  at: Path,
  env: Readonly<Record<string, string | undefined>>,
  secrets: string[],
  fail: (at: Path, problem: string) => AgentConfigError,
): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      const found = env[name];
      if (found === undefined) throw fail(at, `environment variable ${name} is not set`);
      if (found) secrets.push(found);
      return found;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => resolveEnv(v, [...at, i], env, secrets, fail));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveEnv(v, [...at, k], env, secrets, fail)]));
  }
  return value;
}

export function keyPathOf(at: readonly (string | number)[]): string {
  return at.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join('');
}

/**
 * The line of a key path. YAML and JSON: from the parsed document's nodes. TOML (whose parser
 * keeps no positions): the `key =` line inside the table that holds it.
 */
function lineFinder(text: string, format: Format): (at: Path) => number | undefined {
  if (format === 'toml') return (at) => tomlLine(text.split('\n'), at);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  return (at) => {
    for (let n = at.length; n > 0; n--) {
      const node = doc.getIn(at.slice(0, n), true);
      if (isNode(node) && node.range) return lines.linePos(node.range[0]).line;
    }
    return undefined;
  };
}

function tomlLine(lines: readonly string[], at: Path): number | undefined {
  const keys = at.filter((k): k is string => typeof k === 'string');
  for (let n = keys.length; n > 0; n--) {
    const table = keys.slice(0, n - 1).join('.');
    const key = keys[n - 1]!;
    let inTable = table === '';
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!.trim();
      const header = /^\[\[?\s*([^\]]+?)\s*\]\]?/.exec(line);
      if (header) {
        inTable = header[1] === table;
        if (header[1] === [table, key].filter(Boolean).join('.')) return i + 1;
        continue;
      }
      if (inTable && new RegExp(`^["']?${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}["']?\\s*=`).test(line)) return i + 1;
    }
  }
  return undefined;
}
