import { z } from 'zod';

/** The model: which constructor (`provider`), the model id, and what the constructor accepts. */
const ModelSection = z.strictObject({
  provider: z.enum([
    'anthropic', 'openai', 'openai-responses', 'google', 'scripted',
    'xai', 'groq', 'cerebras', 'mistral', 'deepseek', 'openrouter', 'together', 'fireworks', 'zai', 'ollama', 'vllm', 'lmstudio', 'llamacpp',
  ]),
  id: z.string().min(1),
  apiKey: z.string().optional(),
  baseUrl: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  maxTokens: z.number().int().positive().optional(),
  contextWindow: z.number().int().positive().optional(),
});

const McpServer = z.union([
  z.strictObject({
    command: z.string().min(1),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
    prefix: z.string().optional(),
    timeoutMs: z.number().int().positive().optional(),
  }),
  z.strictObject({
    url: z.string().min(1),
    headers: z.record(z.string(), z.string()).optional(),
    transport: z.enum(['auto', 'streamableHttp', 'sse']).optional(),
    prefix: z.string().optional(),
    timeoutMs: z.number().int().positive().optional(),
  }),
]);

const OpenApiSpec = z.strictObject({
  /** A file (relative to the config file) or an http(s) URL. */
  spec: z.string().min(1),
  baseUrl: z.string().optional(),
  bearerToken: z.string().optional(),
  apiKey: z.strictObject({ in: z.enum(['header', 'query']), name: z.string(), value: z.string() }).optional(),
  headers: z.record(z.string(), z.string()).optional(),
  namePrefix: z.string().optional(),
  timeoutMs: z.number().int().positive().optional(),
  maxResponseBytes: z.number().int().positive().optional(),
  /** At most one: which operations become tools (default: all). */
  operationIds: z.array(z.string()).optional(),
  tags: z.array(z.string()).optional(),
  pathPrefix: z.string().optional(),
});

const Limits = z.strictObject({
  maxTurns: z.number().int().positive().optional(),
  maxTotalTokens: z.number().int().positive().optional(),
  maxDurationMs: z.number().int().positive().optional(),
  maxCost: z.number().positive().optional(),
});

const Retry = z.strictObject({
  maxRetries: z.number().int().min(0).optional(),
  initialDelayMs: z.number().min(0).optional(),
  backoffMultiplier: z.number().min(1).optional(),
  maxDelayMs: z.number().min(0).optional(),
  jitter: z.number().min(0).max(1).optional(),
});

const Compaction = z.strictObject({
  maxContextTokens: z.number().int().positive().optional(),
  systemPromptTokens: z.number().int().min(0).optional(),
  keepRecent: z.number().int().min(0).optional(),
  keepFirst: z.number().int().min(0).optional(),
  toolOutputMaxLines: z.number().int().positive().optional(),
});

/** An agent config file, after `${ENV}` references are resolved. */
export const AgentFileSchema = z.strictObject({
  name: z.string().min(1).optional(),
  model: ModelSection,
  /** Models that take a turn the one before could not serve (`models: [model, ...fallbackModels]`). */
  fallbackModels: z.array(ModelSection).optional(),
  systemPrompt: z.string().optional(),
  /** Built-in tools (`bash`, `read_file`, ...) and tools the caller registers, by name. */
  tools: z.array(z.string().min(1)).optional(),
  mcpServers: z.record(z.string(), McpServer).optional(),
  openapi: z.array(OpenApiSpec).optional(),
  limits: Limits.optional(),
  retry: z.union([z.literal(false), Retry]).optional(),
  compaction: Compaction.optional(),
  steeringPolicy: z.enum(['wait', 'skip', 'interrupt']).optional(),
  toolExecution: z.enum(['parallel', 'sequential']).optional(),
  toolTimeoutMs: z.number().int().positive().optional(),
  temperature: z.number().min(0).optional(),
  maxTokens: z.number().int().positive().optional(),
  thinkingLevel: z.enum(['off', 'minimal', 'low', 'medium', 'high']).optional(),
});

export type AgentFile = z.output<typeof AgentFileSchema>;
export type McpServerEntry = z.output<typeof McpServer>;
export type OpenApiEntry = z.output<typeof OpenApiSpec>;

/** Keys the format reserves for features not built yet: rejected with a message saying so. */
export const NOT_SUPPORTED_YET: Readonly<Record<string, string>> = {};
