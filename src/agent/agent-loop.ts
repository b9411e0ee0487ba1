import { defer, type Observable } from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import type { AgentMessage } from '../types/message.js';
import type { AgentContext, AgentLoopConfig } from './config.js';
import { Run } from './run.js';

/**
 * Runs an agent from new prompts: a cold Observable of every event of the run, ending with
 * `AgentEnd` (whose `messages` are all the messages the run added). Nothing happens until you
 * subscribe; unsubscribing tears everything down (HTTP, tools, timers) without further events;
 * aborting `config.signal` ends the run gracefully with TurnEnd and AgentEnd.
 *
 * The run is a pipeline of operators — `filterInput` on the prompts, per turn `compact`, the
 * provider stream through `retryBackoff` and `toMessageEvents`, `dispatchTools`, and
 * `limitExecution` guarding each turn, repeated while there is work (tool results, steering,
 * follow-ups). `config.operators` inserts your own operators at its stages.
 *
 * Bad input fails the Observable with an AgentError before any event and before the model is
 * called: options (`InvalidConfig`, e.g. `config.toolExecution: …`), tools (`InvalidTool`: a name,
 * a duplicate, no `execute`, parameters that are not a compilable object JSON Schema) and prompts
 * (`InvalidPrompt`, naming the index and field: `prompts[2].role: unknown role "system" …`).
 * `prompts` may be one string (one user message); a message's content may be a string (one text
 * block, as in OpenAI's format), and a missing timestamp is filled in.
 *
 * @example
 * agentLoop([userMessage('What is 2+2?')], { systemPrompt: 'Be brief.', messages: [], tools: [] }, { model, provider })
 *   .subscribe((e) => console.log(e.type));
 */
export function agentLoop(prompts: readonly AgentMessage[] | string, context: AgentContext, config: AgentLoopConfig): Observable<AgentEvent> {
  return run(context, config, prompts);
}

/**
 * Resumes from the existing context with no new prompt (after an error, or to let the model go on
 * after tool results). `context.agentId` and `context.sessionId` are required; the context must
 * not be empty, and may end in an assistant message only when steering or follow-ups are queued.
 * These misuses fail the Observable with an AgentError; they never crash.
 */
export function agentLoopContinue(context: AgentContext, config: AgentLoopConfig): Observable<AgentEvent> {
  return run(context, config, undefined);
}

function run(context: AgentContext, config: AgentLoopConfig, prompts: readonly AgentMessage[] | string | undefined): Observable<AgentEvent> {
  const events$ = defer(() => new Run(context, config, prompts).events$());
  return config.operators?.events ? events$.pipe(config.operators.events) : events$;
}
