// The stable public API of phi-rx. Heavy integrations live behind subpaths:
// phi-rx/providers, phi-rx/session, phi-rx/tools, phi-rx/mcp, phi-rx/openapi, phi-rx/testing.
export * from './types/index.js';
export * from './context/index.js';
export * from './operators/index.js';
export * from './loop/index.js';
export { openToolCalls } from './types/open-tool-calls.js';
export { defineTool, type ArgsOf, type ToolSpec } from './tools/define-tool.js';
export type { ArgsSchema } from './tools/args-schema.js';
export type { StandardIssue, StandardResult, StandardSchemaV1 } from './tools/standard-schema.js';
export { MessageQueue, type MessageSource, type QueuedMessage } from './sources/queues.js';
export { fromAbortSignal } from './sources/cancellation.js';
export { Broadcast, BroadcastView, listenTo } from './sources/broadcast.js';
export { MissingPeerDependencyError } from './util/optional-peer.js';
export { toAsyncIterable, runToEnd, newMessages } from './sources/interop.js';
export { runTool, TOOL_TEXTS, type RunToolOptions, type ToolRunEmission } from './sources/tool-run.js';
export { ProviderRegistry, defaultProviderRegistry } from './providers/registry.js';
export { AssistantMessageBuilder } from './providers/message-builder.js';
export { BasicAgent, type BasicAgentOptions, type AgentRunOptions, type PromptInput, type ContinueKindName } from './agent/basic-agent.js';
export { defineAgent, type AgentDefinition, type AgentSessionInit, type AgentRunContext } from './agent/define-agent.js';
export { subAgentTool, type SubAgentOptions } from './agent/sub-agent.js';
export { handoff, withoutToolCalls, type HandoffOptions } from './agent/handoff.js';
export { agentTool, type AgentToolOptions } from './agent/agent-tool.js';
export {
  handoffTeam, isHandoffTool, reachableTools, teamStages, type AgentSpec, type HandoffInput, type HandoffInputFilter, type HandoffTarget, type HandoffTool, type TeamMember,
} from './loop/handoff-team.js';
export { AgentRunError, runText, textStream, textDeltas, finalText } from './output/run-text.js';
export {
  defineOutput, InvalidOutputError, type DefineOutputOptions, type OutputFailure, type OutputIssue, type OutputOf, type OutputOutcome,
  type OutputSchema, type OutputSpec, type OutputValidation,
} from './output/output-spec.js';
export { outputOf, runOutput } from './output/run-output.js';
export { parsePartialJson } from './output/partial-json.js';
export * from './parallel/index.js';
export type { ApprovalRoute, PendingApproval, RunControls } from './agent/run-controls.js';
export type { RestoredAgentState } from './agent/agent-session.js';
export { cancelledText } from './sources/tool-run.js';
// ModelConfig constructors (the providers themselves live in phi-rx/providers).
export { anthropic, openai, azureOpenai, openaiCompatible } from './providers/models.js';
export { openaiResponses, google, googleVertex, bedrock } from './providers/models-responses-gemini-bedrock.js';
export * from './providers/model-ids.js';
export * from './view/index.js';
