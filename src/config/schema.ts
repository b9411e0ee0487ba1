import { arrayOf, boolean, bounded, type Check, fail, integer, isPlainObject, nonEmptyString, object, oneOf, optional, recordOf, string } from '../types/json-check.js';

/** The providers a config file can name (`model.provider`). */
export const CONFIG_PROVIDERS = [
  'anthropic', 'openai', 'openai-responses', 'google', 'scripted',
  'xai', 'groq', 'cerebras', 'mistral', 'deepseek', 'openrouter', 'together', 'fireworks', 'zai', 'ollama', 'vllm', 'lmstudio', 'llamacpp',
] as const;

/** The model: which constructor (`provider`), the model id, and what the constructor accepts. */
export interface ModelSection {
  provider: (typeof CONFIG_PROVIDERS)[number];
  id: string;
  apiKey?: string;
  baseUrl?: string;
  headers?: Record<string, string>;
  maxTokens?: number;
  contextWindow?: number;
}

/** An MCP server started as a child process. */
export interface McpStdioEntry {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  prefix?: string;
  timeoutMs?: number;
}

/** An MCP server reached over HTTP. */
export interface McpHttpEntry {
  url: string;
  headers?: Record<string, string>;
  transport?: 'auto' | 'streamableHttp' | 'sse';
  prefix?: string;
  timeoutMs?: number;
}

export type McpServerEntry = McpStdioEntry | McpHttpEntry;

/**
 * Where the built-in tools work: `workspace = "dir"` (relative to the config file), or a table
 * `{ path?, unconfined? }`. Their paths are confined to it unless `unconfined = true`.
 */
export type WorkspaceEntry = string | { path?: string; unconfined?: boolean };

export interface OpenApiEntry {
  /** A file (relative to the config file) or an http(s) URL. */
  spec: string;
  baseUrl?: string;
  bearerToken?: string;
  apiKey?: { in: 'header' | 'query'; name: string; value: string };
  headers?: Record<string, string>;
  namePrefix?: string;
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** Let the spec URL, its `$ref`s and redirects reach loopback and private addresses (a spec you trust). */
  allowPrivateRefs?: boolean;
  /** Host names a spec may be fetched from whatever they resolve to; every other URL is still checked. */
  trustedHosts?: string[];
  /** At most one: which operations become tools (default: all). */
  operationIds?: string[];
  tags?: string[];
  pathPrefix?: string;
}

/** An agent config file, after `${ENV}` references are resolved. */
export interface AgentFile {
  name?: string;
  model: ModelSection;
  /** Models that take a turn the one before could not serve (`models: [model, ...fallbackModels]`). */
  fallbackModels?: ModelSection[];
  systemPrompt?: string;
  /** Built-in tools (`bash`, `read_file`, ...) and tools the caller registers, by name. */
  tools?: string[];
  /** The directory the built-in tools work in and are confined to (default: the config file's directory). */
  workspace?: WorkspaceEntry;
  mcpServers?: Record<string, McpServerEntry>;
  openapi?: OpenApiEntry[];
  limits?: { maxTurns?: number; maxTotalTokens?: number; maxDurationMs?: number; maxCost?: number };
  retry?: false | { maxRetries?: number; initialDelayMs?: number; backoffMultiplier?: number; maxDelayMs?: number; jitter?: number };
  compaction?: { maxContextTokens?: number; systemPromptTokens?: number; keepRecent?: number; keepFirst?: number; toolOutputMaxLines?: number };
  steeringPolicy?: 'wait' | 'skip' | 'interrupt';
  toolExecution?: 'parallel' | 'sequential';
  toolTimeoutMs?: number;
  temperature?: number;
  maxTokens?: number;
  thinkingLevel?: 'off' | 'minimal' | 'low' | 'medium' | 'high';
}

/** Keys the format reserves for features not built yet: rejected with a message saying so. */
export const NOT_SUPPORTED_YET: Readonly<Record<string, string>> = {};

let built: Check<AgentFile> | undefined;

/**
 * The check of a config file (unknown keys refused at their own path, `unknown key "x"`), built on
 * first use: importing `phi-rx/config` builds nothing and loads no validation library.
 */
export function agentFileCheck(): Check<AgentFile> {
  return (built ??= buildAgentFileCheck());
}

function buildAgentFileCheck(): Check<AgentFile> {
  const positiveInt = optional(integer(1));
  const count = optional(integer(0));
  const amount = optional(bounded(0));
  const strings = optional(arrayOf(string));
  const stringMap = optional(recordOf(string));

  const model: Check<ModelSection> = object({
    provider: oneOf(CONFIG_PROVIDERS),
    id: nonEmptyString(),
    apiKey: optional(string),
    baseUrl: optional(string),
    headers: stringMap,
    maxTokens: positiveInt,
    contextWindow: positiveInt,
  }, 'strict');

  const stdioServer: Check<McpStdioEntry> = object({ command: nonEmptyString(), args: strings, env: stringMap, cwd: optional(string), prefix: optional(string), timeoutMs: positiveInt }, 'strict');
  const httpServer: Check<McpHttpEntry> = object({ url: nonEmptyString(), headers: stringMap, transport: optional(oneOf(['auto', 'streamableHttp', 'sse'])), prefix: optional(string), timeoutMs: positiveInt }, 'strict');
  /** Told apart by `command` (stdio) or `url` (HTTP); both is an unknown key on the stdio side. */
  const mcpServer: Check<McpServerEntry> = (v, path) => {
    if (isPlainObject(v) && 'command' in v) return stdioServer(v, path);
    if (isPlainObject(v) && 'url' in v) return httpServer(v, path);
    return fail(path, 'Invalid input: expected a server with `command` (stdio) or `url` (HTTP)');
  };

  const openApi: Check<OpenApiEntry> = object({
    spec: nonEmptyString(),
    baseUrl: optional(string),
    bearerToken: optional(string),
    apiKey: optional(object({ in: oneOf(['header', 'query']), name: string, value: string }, 'strict')),
    headers: stringMap,
    namePrefix: optional(string),
    timeoutMs: positiveInt,
    maxResponseBytes: positiveInt,
    allowPrivateRefs: optional(boolean),
    trustedHosts: strings,
    operationIds: strings,
    tags: strings,
    pathPrefix: optional(string),
  }, 'strict');

  const workspaceSection = object({ path: optional(nonEmptyString()), unconfined: optional(boolean) }, 'strict');
  const workspace: Check<WorkspaceEntry> = (v, path) => (typeof v === 'string' ? nonEmptyString()(v, path) : workspaceSection(v, path));

  const retrySection = object({
    maxRetries: count,
    initialDelayMs: amount,
    backoffMultiplier: optional(bounded(1)),
    maxDelayMs: amount,
    jitter: optional(bounded(0, 1)),
  }, 'strict');
  const retry: Check<AgentFile['retry']> = (v, path) => (v === undefined || v === false ? v : retrySection(v, path));

  return object({
    name: optional(nonEmptyString()),
    model,
    fallbackModels: optional(arrayOf(model)),
    systemPrompt: optional(string),
    tools: optional(arrayOf(nonEmptyString())),
    workspace: optional(workspace),
    mcpServers: optional(recordOf(mcpServer)),
    openapi: optional(arrayOf(openApi)),
    limits: optional(object({ maxTurns: positiveInt, maxTotalTokens: positiveInt, maxDurationMs: positiveInt, maxCost: optional(bounded(0, Infinity, true)) }, 'strict')),
    retry,
    compaction: optional(object({ maxContextTokens: positiveInt, systemPromptTokens: count, keepRecent: count, keepFirst: count, toolOutputMaxLines: positiveInt }, 'strict')),
    steeringPolicy: optional(oneOf(['wait', 'skip', 'interrupt'])),
    toolExecution: optional(oneOf(['parallel', 'sequential'])),
    toolTimeoutMs: positiveInt,
    temperature: optional(bounded(0)),
    maxTokens: positiveInt,
    thinkingLevel: optional(oneOf(['off', 'minimal', 'low', 'medium', 'high'])),
  }, 'strict');
}
