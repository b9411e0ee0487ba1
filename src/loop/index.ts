// What agentLoop is: its composition of stages (./stages), the kernel they share (./kernel), and its set-up.
export * from './kernel/index.js';
export * from './stages/index.js';
export { agentLoop, agentLoopContinue } from './agent-loop.js';
export type { AgentContext, AgentLoopConfig, PipelineOperators } from './config.js';
export { configSegment, loopIdFor, continuationTag } from './ids.js';
export { type ModelChoice, checkModelChain, resolveModelChain } from './model-chain.js';
export { allOf, anyOf, costOver, labelled, textMatches, tokensOver, toolCalled, turnCount, type StopCondition, type StopContext } from './stop-conditions.js';
export {
  ToolGuardrailReports, toolInputPolicy, toolOutputStage, type Guardrail, type GuardrailVerdict, type InputGuardrailContext, type LoopGuardrails, type OutputGuardrailContext,
  type ToolInputGuardrailContext, type ToolOutputGuardrailContext,
} from './guardrails.js';
export type { RunCompositions } from './run-composition.js';
export type { TeamStages } from './handoff-team.js';
export type { Trip } from './guardrails.js';
