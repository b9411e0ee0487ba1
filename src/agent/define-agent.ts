import { type Observable, throwError } from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import { type AgentMessage, userMessage } from '../types/message.js';
import { AgentError } from '../types/errors.js';
import { composedLoop } from '../loop/agent-loop.js';
import type { AgentLoopConfig } from '../loop/config.js';
import { checkLoopOptions } from '../loop/check-options.js';
import { checkTools } from '../tools/check-tools.js';
import { RunCompositions } from '../loop/run-composition.js';
import { BasicAgent, type BasicAgentOptions, type PromptInput } from './basic-agent.js';

/** What a session of a definition is given of its own (everything else comes from the definition). */
export interface AgentSessionInit {
  /** Default: a fresh id (the options' `ids`, else `crypto.randomUUID`). */
  agentId?: string;
  /** Default: a fresh id. */
  sessionId?: string;
}

/** What one `definition.run(...)` is given of its own: the conversation so far, ids and an abort signal. */
export interface AgentRunContext {
  /** The conversation before the prompts (default: none). Not changed: the run's new messages are on its AgentEnd. */
  messages?: readonly AgentMessage[];
  agentId?: string;
  sessionId?: string;
  /** Graceful abort: the run still ends with TurnEnd and AgentEnd (stopReason `aborted`). */
  signal?: AbortSignal;
}

/**
 * An agent defined once and run by many conversations: what a server holds to serve thousands of
 * them. `session()` is a {@link BasicAgent} of its own (its conversation, queues, approvals, abort
 * and session record), `run()` one stateless `agentLoop` run; both run through the compositions the
 * definition keeps, so that the loop is composed once for all of them instead of once per run.
 */
export interface AgentDefinition {
  /** The options every session starts from: a copy taken when the agent was defined. */
  readonly options: Readonly<BasicAgentOptions>;
  /** A new conversation: a BasicAgent with the definition's options and ids of its own. */
  session(init?: AgentSessionInit): BasicAgent;
  /** One run over `context.messages` (as `agentLoop`), the definition's system prompt, tools and options. */
  run(prompts: PromptInput, context?: AgentRunContext): Observable<AgentEvent>;
}

/**
 * Defines an agent once (model, provider, system prompt, tools, hooks, policies, any option of
 * `BasicAgent`) for many conversations. Bad options and tools throw here, not at the first run.
 * Define it at module level, as you define a route: a definition made per request shares nothing.
 * The definition takes its options as they are now; change a session with its builder methods
 * (`session().withTools(extra)`: that session then composes its own run), not the options object.
 *
 * @example
 * const support = defineAgent({ model, provider, systemPrompt: 'You help with orders.', tools: [lookupOrder] });
 * // per conversation (a request handler, a websocket):
 * const agent = support.session({ sessionId });
 * const answer = await agent.run('Where is my order?');
 */
export function defineAgent(options: BasicAgentOptions): AgentDefinition {
  if (options === null || typeof options !== 'object') throw new AgentError('InvalidConfig', `defineAgent: options must be an object, got ${options === null ? 'null' : typeof options}`);
  const own: BasicAgentOptions = { ...options, ...(options.tools ? { tools: [...options.tools] } : {}) };
  new DefinedAgent(own, new RunCompositions()); // the same checks as a session's: duplicate tool names
  const { systemPrompt, tools = [], steeringMode: _sm, followUpMode: _fm, agentId: _a, sessionId: _s, tracing, ...loop } = own;
  checkLoopOptions(loop as AgentLoopConfig);
  checkTools(tools);
  const compositions = new RunCompositions();
  return {
    options: own,
    session: (init) => new DefinedAgent({ ...own, ...init }, compositions),
    run: (prompts, context = {}) => {
      if (prompts === undefined || prompts === null) return throwError(() => new AgentError('InvalidPrompt', 'definition.run: no prompts (a string, a message or an array of messages)'));
      const config: AgentLoopConfig = context.signal ? { ...loop, signal: context.signal } : loop;
      const messages = typeof prompts === 'string' ? [userMessage(prompts)] : Array.isArray(prompts) ? (prompts as readonly AgentMessage[]) : [prompts as AgentMessage];
      const run$ = composedLoop(compositions, messages, {
        systemPrompt: systemPrompt ?? '', tools, messages: context.messages ? context.messages.slice() : [],
        ...(context.agentId !== undefined ? { agentId: context.agentId } : {}),
        ...(context.sessionId !== undefined ? { sessionId: context.sessionId } : {}),
      }, config);
      return tracing ? run$.pipe(tracing.trace()) : run$;
    },
  };
}

/** A session of a definition: a BasicAgent whose runs take the definition's compositions. */
class DefinedAgent extends BasicAgent {
  constructor(options: BasicAgentOptions, compositions: RunCompositions) {
    super(options);
    this.compositions = compositions;
  }
}
