/** `phi-rx/config`: agents from TOML, YAML or JSON files. Node only (reads files). */
export { AgentConfigError, loadAgentConfig, parseAgentConfig, type LoadConfigOptions, type LoadedAgentConfig } from './load.js';
export { createAgentFromConfig, type ConfiguredAgent, type CreateAgentOptions } from './create-agent.js';
export type { AgentFile, McpServerEntry, McpStdioEntry, McpHttpEntry, ModelSection, OpenApiEntry, WorkspaceEntry } from './schema.js';
export type { AgentConfigFormat } from './load.js';
