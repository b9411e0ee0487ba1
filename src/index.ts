// The stable public API of phi-rx. Heavy integrations live behind subpaths:
// phi-rx/providers, phi-rx/session, phi-rx/tools, phi-rx/mcp, phi-rx/openapi, phi-rx/testing.
export * from './types/index.js';
export * from './context/index.js';
export * from './operators/index.js';
export { agentLoop, agentLoopContinue } from './agent/agent-loop.js';
export type { AgentContext, AgentLoopConfig, PipelineOperators } from './agent/config.js';
export { configSegment, loopIdFor, continuationTag } from './agent/ids.js';
export { type ModelChoice, checkModelChain, resolveModelChain } from './agent/model-chain.js';
export { defineTool, type ArgsOf, type ToolSpec } from './tools/define-tool.js';
export type { StandardIssue, StandardResult, StandardSchemaV1 } from './tools/standard-schema.js';
export { MessageQueue, type MessageSource, type QueuedMessage } from './sources/queues.js';
export { fromAbortSignal } from './sources/cancellation.js';
export { Broadcast, BroadcastView, listenTo } from './sources/broadcast.js';
export { MissingPeerDependencyError } from './sources/optional-peer.js';
export { toAsyncIterable, runToEnd, newMessages } from './sources/interop.js';
export { runTool, TOOL_TEXTS, type RunToolOptions, type ToolRunEmission } from './sources/tool-run.js';
export { ProviderRegistry, defaultProviderRegistry } from './sources/providers/registry.js';
export { AssistantMessageBuilder } from './sources/providers/message-builder.js';
export { BasicAgent, type BasicAgentOptions, type AgentRunOptions, type PromptInput, type ContinueKindName } from './agent/basic-agent.js';
export { subAgentTool, type SubAgentOptions } from './agent/sub-agent.js';
export { AgentRunError, runText, textStream, textDeltas, finalText } from './agent/run-text.js';
export {
  defineOutput, InvalidOutputError, type DefineOutputOptions, type OutputFailure, type OutputIssue, type OutputOf, type OutputOutcome,
  type OutputSchema, type OutputSpec, type OutputValidation,
} from './agent/output-spec.js';
export { outputOf, runOutput } from './agent/run-output.js';
export { parsePartialJson } from './agent/partial-json.js';
export * from './agent/parallel-index.js';
export type { ApprovalRoute, PendingApproval, RunControls } from './agent/run-controls.js';
export type { RestoredAgentState } from './agent/agent-session.js';
export { cancelledText } from './sources/tool-run.js';
// ModelConfig constructors (the providers themselves live in phi-rx/providers).
export { anthropic, openai, azureOpenai, openaiCompatible } from './sources/providers/models.js';
export { openaiResponses, google, googleVertex, bedrock } from './sources/providers/models-responses-gemini-bedrock.js';
export * from './sources/providers/model-ids.js';
export * from './view/index.js';
