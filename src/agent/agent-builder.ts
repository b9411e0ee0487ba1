import type { MonoTypeOperatorFunction } from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import type { ModelConfig } from '../types/provider.js';
import type { AnyTool } from '../types/tool.js';
import type { QueueMode, SteeringPolicy } from '../types/config.js';
import type { InputFilter, LoopHooks, PostLoopPolicy, PostTurnPolicy, PreDispatchPolicy, PreTurnPolicy } from '../types/hooks.js';
import { AgentError } from '../types/errors.js';
import type { AgentLoopConfig } from '../loop/config.js';
import type { McpConnection, McpHttpParams, McpStdioParams, McpToolsOptions } from '../integrations/mcp/index.js';
import type { OpenApiConfig, OpenApiTools, OperationFilter } from '../integrations/openapi/index.js';
import { addMcpServerHttp, addMcpServerStdio, addOpenApiFile, addOpenApiSpec, addOpenApiUrl, type AddTools } from './agent-integrations.js';

/** Loop options a BasicAgent passes to every run (the agent owns signal, steering and follow-ups). */
export type AgentRunOptions = Omit<AgentLoopConfig, 'signal' | 'steering' | 'followUp' | 'model'>;

export interface BasicAgentOptions extends AgentRunOptions {
  model: ModelConfig;
  systemPrompt?: string;
  tools?: readonly AnyTool[];
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
  agentId?: string;
  sessionId?: string;
  /** Traces every run (`new AgentTracing()` from `phi-rx/otel`, or anything with a `trace()` operator). */
  tracing?: { trace(): MonoTypeOperatorFunction<AgentEvent> };
}

/**
 * The configuration half of {@link BasicAgent}: model, system prompt, tools, policies and hooks,
 * set fluently (each method returns the agent). BasicAgent adds runs, queues and state.
 */
export abstract class AgentBuilder {
  protected options: BasicAgentOptions;
  protected tools: AnyTool[];

  constructor(options: BasicAgentOptions) {
    this.options = { ...options };
    this.tools = [...(options.tools ?? [])];
    this.assertUniqueTools(this.tools);
  }

  get model(): ModelConfig {
    return this.options.model;
  }
  get systemPrompt(): string {
    return this.options.systemPrompt ?? '';
  }
  get toolList(): readonly AnyTool[] {
    return this.tools;
  }

  withTools(...tools: AnyTool[]): this {
    const next = [...this.tools, ...tools];
    this.assertUniqueTools(next);
    this.tools = next;
    return this;
  }

  // integrations, loaded on first use (so `import 'phi-rx'` stays light)

  /** Spawns an MCP server (env passed explicitly) and adds its tools. Keep the connection to `close()` it. */
  async withMcpServerStdio(params: McpStdioParams, tools: McpToolsOptions = {}): Promise<McpConnection> {
    return addMcpServerStdio(this.addTools, params, tools);
  }

  /** Connects to an MCP server over Streamable HTTP (falling back to SSE) and adds its tools. */
  async withMcpServerHttp(params: McpHttpParams, tools: McpToolsOptions = {}): Promise<McpConnection> {
    return addMcpServerHttp(this.addTools, params, tools);
  }

  /** One tool per operation of an OpenAPI spec file (JSON or YAML). Returns the warnings too. */
  async withOpenApiFile(file: string, config?: OpenApiConfig, filter?: OperationFilter): Promise<OpenApiTools> {
    return addOpenApiFile(this.addTools, file, config, filter);
  }

  async withOpenApiUrl(url: string | URL, config?: OpenApiConfig, filter?: OperationFilter): Promise<OpenApiTools> {
    return addOpenApiUrl(this.addTools, url, config, filter);
  }

  async withOpenApiSpec(spec: string | object, config?: OpenApiConfig, filter?: OperationFilter): Promise<OpenApiTools> {
    return addOpenApiSpec(this.addTools, spec, config, filter);
  }

  /** Adds the tools an integration made (made per call: an agent that uses none pays nothing). */
  private get addTools(): AddTools {
    return (tools) => {
      this.withTools(...tools);
    };
  }

  withoutTool(name: string): this {
    this.tools = this.tools.filter((t) => t.name !== name);
    return this;
  }
  withSystemPrompt(systemPrompt: string): this {
    this.options.systemPrompt = systemPrompt;
    return this;
  }
  /** Appends text to the system prompt (skills indexes, house rules). */
  appendSystemPrompt(text: string): this {
    this.options.systemPrompt = this.systemPrompt ? `${this.systemPrompt}\n\n${text}` : text;
    return this;
  }
  /**
   * Appends a skills index (`SkillSet.formatForPrompt()` from `phi-rx/tools`) to the system prompt,
   * per the AgentSkills standard. Takes anything that renders itself for a prompt.
   */
  withSkills(skills: { formatForPrompt(): string }): this {
    const index = skills.formatForPrompt();
    return index ? this.appendSystemPrompt(index) : this;
  }
  withModel(model: ModelConfig): this {
    this.options.model = model;
    return this;
  }
  with(options: Partial<AgentRunOptions>): this {
    this.options = { ...this.options, ...options };
    return this;
  }
  withInputFilter(filter: InputFilter): this {
    this.options.inputFilters = [...(this.options.inputFilters ?? []), filter];
    return this;
  }
  withPreTurnPolicy(policy: PreTurnPolicy): this {
    return this.addPolicy('preTurn', policy);
  }
  withPreDispatchPolicy(policy: PreDispatchPolicy): this {
    return this.addPolicy('preDispatch', policy);
  }
  withPostTurnPolicy(policy: PostTurnPolicy): this {
    return this.addPolicy('postTurn', policy);
  }
  withPostLoopPolicy(policy: PostLoopPolicy): this {
    return this.addPolicy('postLoop', policy);
  }
  withSteeringPolicy(policy: SteeringPolicy): this {
    this.options.steeringPolicy = policy;
    return this;
  }
  withHooks(hooks: LoopHooks): this {
    this.options.hooks = { ...this.options.hooks, ...hooks };
    return this;
  }

  onBeforeLoop(fn: NonNullable<LoopHooks['beforeLoop']>): this {
    return this.withHooks({ beforeLoop: fn });
  }
  onAfterLoop(fn: NonNullable<LoopHooks['afterLoop']>): this {
    return this.withHooks({ afterLoop: fn });
  }
  onBeforeTurn(fn: NonNullable<LoopHooks['beforeTurn']>): this {
    return this.withHooks({ beforeTurn: fn });
  }
  onAfterTurn(fn: NonNullable<LoopHooks['afterTurn']>): this {
    return this.withHooks({ afterTurn: fn });
  }
  onError(fn: NonNullable<LoopHooks['onError']>): this {
    return this.withHooks({ onError: fn });
  }
  onBeforeToolExecution(fn: NonNullable<LoopHooks['beforeToolExecution']>): this {
    return this.withHooks({ beforeToolExecution: fn });
  }
  onAfterToolExecution(fn: NonNullable<LoopHooks['afterToolExecution']>): this {
    return this.withHooks({ afterToolExecution: fn });
  }
  onBeforeToolExecutionUpdate(fn: NonNullable<LoopHooks['beforeToolExecutionUpdate']>): this {
    return this.withHooks({ beforeToolExecutionUpdate: fn });
  }
  onAfterToolExecutionUpdate(fn: NonNullable<LoopHooks['afterToolExecutionUpdate']>): this {
    return this.withHooks({ afterToolExecutionUpdate: fn });
  }

  private assertUniqueTools(tools: readonly AnyTool[]): void {
    const seen = new Set<string>();
    for (const t of tools) {
      if (seen.has(t.name)) throw new AgentError('InvalidConfig', `Duplicate tool name "${t.name}": tool names must be unique.`);
      seen.add(t.name);
    }
  }

  private addPolicy<K extends 'preTurn' | 'preDispatch' | 'postTurn' | 'postLoop'>(
    slot: K,
    policy: NonNullable<NonNullable<AgentLoopConfig['policies']>[K]>[number],
  ): this {
    const policies = { ...this.options.policies };
    (policies[slot] as unknown[]) = [...((policies[slot] as unknown[] | undefined) ?? []), policy];
    this.options.policies = policies;
    return this;
  }
}
