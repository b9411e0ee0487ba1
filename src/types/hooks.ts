import type { Observable } from 'rxjs';
import type { AgentMessage, AssistantMessage, ToolResultMessage } from './message.js';
import type { ToolCall } from './content.js';
import type { Usage } from './usage.js';

/** A hook may answer with a value, a Promise or an Observable (its first value counts). */
export type HookResult<T> = T | Promise<T> | Observable<T>;

/** Lifecycle hooks of spec 003. A before-hook vetoes by answering `false`; `undefined` means go on. */
export interface LoopHooks {
  beforeLoop?(messages: readonly AgentMessage[], loopIndex: number): HookResult<boolean | void>;
  afterLoop?(newMessages: readonly AgentMessage[], usage: Usage): HookResult<void>;
  beforeTurn?(messages: readonly AgentMessage[], turnIndex: number): HookResult<boolean | void>;
  afterTurn?(messages: readonly AgentMessage[], usage: Usage): HookResult<void>;
  /** Fires once when a turn ends in a provider error (after retries). */
  onError?(message: string, error: unknown): HookResult<void>;
  beforeToolExecution?(toolName: string, toolCallId: string, args: Record<string, unknown>): HookResult<boolean | void>;
  afterToolExecution?(toolName: string, toolCallId: string, isError: boolean): HookResult<void>;
  beforeToolExecutionUpdate?(toolName: string, toolCallId: string, text: string): HookResult<boolean | void>;
  afterToolExecutionUpdate?(toolName: string, toolCallId: string, text: string): HookResult<void>;
}

export type HookName = keyof LoopHooks;

/** What an input filter says of one incoming user message. */
export type InputVerdict = { action: 'pass' } | { action: 'warn'; message: string } | { action: 'reject'; reason: string };

export const InputVerdict = {
  pass: (): InputVerdict => ({ action: 'pass' }),
  warn: (message: string): InputVerdict => ({ action: 'warn', message }),
  reject: (reason: string): InputVerdict => ({ action: 'reject', reason }),
};

/** Checks prompts, steering and follow-up messages before they enter the context. */
export type InputFilter = (message: AgentMessage) => HookResult<InputVerdict>;

/** swink's policy verdicts. */
export type PolicyVerdict =
  | { action: 'continue' }
  | { action: 'stop'; reason: string }
  | { action: 'inject'; messages: AgentMessage[] };

export interface PreTurnContext {
  /** Only the messages added since the previous model call (the first prompt included). */
  newMessages: readonly AgentMessage[];
  messages: readonly AgentMessage[];
  turnIndex: number;
}

/** Runs before each model call. Stop ends the run; Inject adds messages before the call. */
export type PreTurnPolicy = (ctx: PreTurnContext) => HookResult<PolicyVerdict | void>;

export type PreDispatchVerdict =
  | { action: 'continue'; arguments?: Record<string, unknown> }
  | { action: 'skip'; reason: string }
  | { action: 'stop'; reason: string }
  | { action: 'inject'; messages: AgentMessage[] };

/** Runs before each tool call. May rewrite arguments, skip the call, stop the run after this turn, or queue messages. */
export type PreDispatchPolicy = (call: ToolCall, ctx: { messages: readonly AgentMessage[] }) => HookResult<PreDispatchVerdict | void>;

export type PostTurnVerdict =
  | { action: 'continue' }
  | { action: 'stop'; reason: string }
  /** Replaces the assistant message before TurnEnd; its tool calls must be the same (ids and names). */
  | { action: 'inject'; message: AssistantMessage };

export interface PostTurnContext {
  message: AssistantMessage;
  toolResults: readonly ToolResultMessage[];
  messages: readonly AgentMessage[];
  turnIndex: number;
}

export type PostTurnPolicy = (ctx: PostTurnContext) => HookResult<PostTurnVerdict | void>;

/** Runs when the run would end. Inject starts another turn with the messages. */
export type PostLoopPolicy = (ctx: { messages: readonly AgentMessage[]; newMessages: readonly AgentMessage[] }) => HookResult<PolicyVerdict | void>;

export interface LoopPolicies {
  preTurn?: PreTurnPolicy[];
  preDispatch?: PreDispatchPolicy[];
  postTurn?: PostTurnPolicy[];
  postLoop?: PostLoopPolicy[];
}
