// What agentLoop is: its composition of stages (./stages), the kernel they share (./kernel), and its set-up.
export * from './kernel/index.js';
export * from './stages/index.js';
export { agentLoop, agentLoopContinue } from './agent-loop.js';
export type { AgentContext, AgentLoopConfig, PipelineOperators } from './config.js';
export { configSegment, loopIdFor, continuationTag } from './ids.js';
export { type ModelChoice, checkModelChain, resolveModelChain } from './model-chain.js';
