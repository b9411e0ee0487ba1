import path from 'node:path';
import { BasicAgent, type BasicAgentOptions } from '../agent/basic-agent.js';
import type { McpConnection } from '../integrations/mcp/index.js';
import { OpenApiAuth, OperationFilter, type OpenApiConfig } from '../integrations/openapi/config.js';
import { anthropic, google, openai, openaiCompatible, openaiResponses, type ModelOptions } from '../providers/index.js';
import { defaultProviderRegistry } from '../providers/registry.js';
import { redactingProvider } from '../providers/redacting-provider.js';
import { scriptedModel } from '../testing/scripted-provider.js';
import { defaultTools, type WorkspaceOptions } from '../tools/index.js';
import type { ModelConfig, Provider } from '../types/provider.js';
import type { AnyTool } from '../types/tool.js';
import { loadAgentConfig, type LoadConfigOptions, type LoadedAgentConfig } from './load.js';
import type { AgentFile, OpenApiEntry, WorkspaceEntry } from './schema.js';

export interface CreateAgentOptions extends LoadConfigOptions {
  /** Tools the config's `tools` list may name, besides the built-in ones. */
  tools?: readonly AnyTool[];
  /** Bypasses the provider registry (tests; required for `provider = "scripted"`). */
  provider?: Provider;
  /** More BasicAgent options (tracing, ids, scheduler ...); the file's settings win. */
  agent?: Partial<BasicAgentOptions>;
}

export interface ConfiguredAgent {
  agent: BasicAgent;
  /** `name` from the file, if any. */
  name: string | undefined;
  loaded: LoadedAgentConfig;
  /** The model, then the fallback models, as the agent runs them (for pricing each answer by its model). */
  models: readonly ModelConfig[];
  /** Closes the MCP connections the config opened. */
  close(): Promise<void>;
}

/**
 * A BasicAgent from a config file: model, system prompt, tools by name (built-in tools work in,
 * and are confined to, the `workspace`: by default the config file's directory), fallback models, MCP servers, OpenAPI specs, limits, retry,
 * compaction and steering policy. On any failure the MCP servers started so far are closed again.
 *
 * @example
 * const { agent, close } = await createAgentFromConfig('agent.toml', { tools: [myTool] });
 * try { await agent.run('hello'); } finally { await close(); }
 */
export async function createAgentFromConfig(file: string, options: CreateAgentOptions = {}): Promise<ConfiguredAgent> {
  const loaded = await loadAgentConfig(file, options);
  const { config } = loaded;
  const dir = path.dirname(path.resolve(file));
  const tools = resolveTools(loaded, workspaceOf(config.workspace, dir), options.tools ?? []);
  if (config.model.provider === 'scripted' && !options.provider) {
    throw loaded.errorAt(['model', 'provider'], '"scripted" needs a provider passed in code (createAgentFromConfig(file, { provider }))');
  }
  const model = modelOf(config.model);
  const fallbacks = (config.fallbackModels ?? []).map((entry, i) => {
    if (entry.provider === 'scripted') throw loaded.errorAt(['fallbackModels', i, 'provider'], '"scripted" cannot be a fallback (its provider is the one passed in code)');
    return modelOf(entry);
  });
  // The values read from ${ENV} are redacted from every model error, wherever a provider put them.
  const registry: Provider = (request, callOptions) => defaultProviderRegistry().resolve(request.model)(request, callOptions);
  const redacted = (provider: Provider): Provider => redactingProvider(provider, loaded.secrets);
  const agent = new BasicAgent({
    ...options.agent,
    model,
    ...(fallbacks.length > 0 ? { models: [model, ...fallbacks.map((fallback) => ({ model: fallback, provider: redacted(registry) }))] } : {}),
    provider: redacted(options.provider ?? options.agent?.provider ?? registry),
    ...(config.systemPrompt !== undefined ? { systemPrompt: config.systemPrompt } : {}),
    tools,
    ...loopOptions(config),
  });
  const connections: McpConnection[] = [];
  const close = async (): Promise<void> => {
    await Promise.all(connections.splice(0).map((c) => c.close()));
  };
  try {
    for (const [name, server] of Object.entries(config.mcpServers ?? {})) {
      const tuning = { prefix: server.prefix ?? name, ...(server.timeoutMs ? { timeoutMs: server.timeoutMs } : {}) };
      try {
        connections.push(
          'command' in server
            ? await agent.withMcpServerStdio({ command: server.command, args: server.args ?? [], env: server.env ?? {}, cwd: server.cwd ? path.resolve(dir, server.cwd) : dir }, tuning)
            : await agent.withMcpServerHttp({ url: server.url, ...(server.headers ? { headers: server.headers } : {}), ...(server.transport ? { transport: server.transport } : {}) }, tuning),
        );
      } catch (e) {
        throw loaded.errorAt(['mcpServers', name], `cannot start the MCP server: ${(e as Error).message}`);
      }
    }
    for (const [i, entry] of (config.openapi ?? []).entries()) {
      const filter = filterOf(loaded, entry, i);
      try {
        if (/^https?:\/\//.test(entry.spec)) await agent.withOpenApiUrl(entry.spec, openApiConfigOf(entry), filter);
        else await agent.withOpenApiFile(path.resolve(dir, entry.spec), openApiConfigOf(entry), filter);
      } catch (e) {
        throw loaded.errorAt(['openapi', i, 'spec'], `cannot load the OpenAPI spec: ${(e as Error).message}`);
      }
    }
  } catch (e) {
    await close();
    throw e;
  }
  return { agent, name: config.name, loaded, models: [model, ...fallbacks], close };
}

function modelOf(section: AgentFile['model']): ModelConfig {
  const { provider, id, ...rest } = section;
  const options: ModelOptions = rest;
  switch (provider) {
    case 'anthropic': return anthropic(id, options);
    case 'openai': return openai(id, options);
    case 'openai-responses': return openaiResponses(id, options);
    case 'google': return google(id, options);
    case 'scripted': return { ...scriptedModel(id), ...options };
    default: return openaiCompatible(provider, id, options);
  }
}

function loopOptions(config: AgentFile): Partial<BasicAgentOptions> {
  return {
    ...(config.limits ? { limits: config.limits } : {}),
    ...(config.retry !== undefined ? { retry: config.retry } : {}),
    ...(config.compaction ? { contextConfig: config.compaction } : {}),
    ...(config.steeringPolicy ? { steeringPolicy: config.steeringPolicy } : {}),
    ...(config.toolExecution ? { toolExecution: config.toolExecution } : {}),
    ...(config.toolTimeoutMs ? { toolTimeoutMs: config.toolTimeoutMs } : {}),
    ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
    ...(config.maxTokens ? { maxTokens: config.maxTokens } : {}),
    ...(config.thinkingLevel ? { thinkingLevel: config.thinkingLevel } : {}),
  };
}

/** The built-in tools' directory, confined (`root`) unless the file says `unconfined = true`. */
function workspaceOf(entry: WorkspaceEntry | undefined, dir: string): WorkspaceOptions {
  const where = typeof entry === 'string' ? entry : entry?.path;
  const cwd = where === undefined ? dir : path.resolve(dir, where);
  return typeof entry === 'object' && entry.unconfined === true ? { cwd } : { cwd, root: cwd };
}

/** The tools the file names, and only those: `bash` is there only when named. */
function resolveTools(loaded: LoadedAgentConfig, ws: WorkspaceOptions, registered: readonly AnyTool[]): AnyTool[] {
  const names = loaded.config.tools ?? [];
  if (names.length === 0) return [];
  const known = new Map<string, AnyTool>();
  for (const tool of defaultTools(ws)) known.set(tool.name, tool);
  for (const tool of registered) known.set(tool.name, tool);
  return names.map((name, i) => {
    const tool = known.get(name);
    if (!tool) throw loaded.errorAt(['tools', i], `unknown tool "${name}" (known: ${[...known.keys()].join(', ')})`);
    return tool;
  });
}

function filterOf(loaded: LoadedAgentConfig, entry: OpenApiEntry, i: number): OperationFilter {
  const given = (['operationIds', 'tags', 'pathPrefix'] as const).filter((k) => entry[k] !== undefined);
  if (given.length > 1) throw loaded.errorAt(['openapi', i, given[1]!], `give one of operationIds, tags or pathPrefix, not ${given.join(' and ')}`);
  if (entry.operationIds) return OperationFilter.byOperationId(...entry.operationIds);
  if (entry.tags) return OperationFilter.byTag(...entry.tags);
  if (entry.pathPrefix !== undefined) return OperationFilter.byPathPrefix(entry.pathPrefix);
  return OperationFilter.all();
}

function openApiConfigOf(entry: OpenApiEntry): OpenApiConfig {
  const auth = entry.bearerToken
    ? OpenApiAuth.bearer(entry.bearerToken)
    : entry.apiKey
      ? entry.apiKey.in === 'header' ? OpenApiAuth.apiKey(entry.apiKey.name, entry.apiKey.value) : OpenApiAuth.apiKeyQuery(entry.apiKey.name, entry.apiKey.value)
      : undefined;
  return {
    ...(entry.baseUrl ? { baseUrl: entry.baseUrl } : {}),
    ...(auth ? { auth } : {}),
    ...(entry.headers ? { customHeaders: entry.headers } : {}),
    ...(entry.namePrefix ? { namePrefix: entry.namePrefix } : {}),
    ...(entry.timeoutMs ? { timeoutMs: entry.timeoutMs } : {}),
    ...(entry.maxResponseBytes ? { maxResponseBytes: entry.maxResponseBytes } : {}),
    ...(entry.allowPrivateRefs !== undefined ? { allowPrivateRefs: entry.allowPrivateRefs } : {}),
    ...(entry.trustedHosts ? { trustedHosts: entry.trustedHosts } : {}),
  };
}
