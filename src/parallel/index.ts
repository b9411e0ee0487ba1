// Best-of-N: parallel branches and their evaluation (wired into src/index.ts by the lead).
export { agentLoopParallel, agentLoopParallelResult, parallelResult, parallelResultOf } from './agent-loop-parallel.js';
export type { AgentLoopParallelOptions, ParallelResult } from './agent-loop-parallel.js';
export { Evaluation, candidatesOf, parseChoice, DEFAULT_JUDGE_SYSTEM_PROMPT } from './evaluation.js';
export type { LlmJudgeConfig, LlmJudgeOptions } from './evaluation.js';
export { evaluateParallel, asStrategy, EVALUATION_WARNING_SOURCE } from './evaluate-parallel.js';
export type {
  EvaluateParallelOptions, EvaluationContext, EvaluationResult, EvaluationStrategy, EvaluationVerdict, Evaluator, EvaluatorFn,
  ParallelDecision, ParallelOutcome, ParallelOutcomes,
} from './evaluate-parallel.js';
