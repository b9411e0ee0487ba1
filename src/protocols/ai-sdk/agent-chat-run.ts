import type { Observable } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
import type { AgentMessage } from '../../types/message.js';

/** The part of a `BasicAgent` {@link agentChatRun} uses. */
export interface ChatAgent {
  restoreMessages(json: string): void;
  prompt(input: readonly AgentMessage[]): Observable<AgentEvent>;
  approve(toolCallId: string, decision: { approved: boolean; reason?: string }): unknown;
  abort(): void;
}

/**
 * A chat request's run on a fresh agent: the conversation before the trailing user messages is
 * restored, those are the prompt; approvals and stop go to the agent. What `UIMessageStreamHub`'s
 * `run` returns for a `BasicAgent`.
 *
 * @example
 * new UIMessageStreamHub({ authorize, run: ({ messages }) => agentChatRun(new BasicAgent({ model, provider, tools }), messages) });
 */
export function agentChatRun(agent: ChatAgent, messages: readonly AgentMessage[]) {
  let split = messages.length;
  while (split > 0 && messages[split - 1]!.role === 'user') split--;
  if (split === messages.length) throw new TypeError('agentChatRun: the messages must end with a user message (the prompt)');
  agent.restoreMessages(JSON.stringify(messages.slice(0, split)));
  return {
    events$: agent.prompt(messages.slice(split)),
    approve: (toolCallId: string, decision: { approved: boolean; reason?: string }): void => void agent.approve(toolCallId, decision),
    abort: (): void => agent.abort(),
  };
}
