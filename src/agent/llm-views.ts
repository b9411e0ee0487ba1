import { type AgentMessage, type Message, toLlmMessages } from '../types/message.js';

/**
 * What the provider sees of a run's messages (`toLlmMessages`), converted once per message:
 * messages are not changed once recorded, and converting the whole conversation again on every
 * turn would make a long run quadratic.
 */
export class LlmViews {
  /** Views of arbitrary message lists (a transformed context), remembered per message. */
  private readonly byMessage = new WeakMap<AgentMessage, Message | null>();
  /**
   * The views of the run's context, kept in step with it: the context only grows between turns, so
   * each turn converts just the messages added since the last one and copies the rest. A new array
   * (compaction) or `reset` (a message replaced in place) starts it over.
   */
  private context: { of: readonly AgentMessage[]; seen: number; list: Message[] } | undefined;

  /** The views of the run's own (growing) context array. */
  of(messages: readonly AgentMessage[]): Message[] {
    if (this.context?.of !== messages) this.context = { of: messages, seen: 0, list: [] };
    const views = this.context;
    for (; views.seen < messages.length; views.seen++) {
      // Each message is seen once here (no WeakMap entry: a table the GC must walk on every collection).
      const view = llmView(messages[views.seen]!);
      if (view !== null) views.list.push(view);
    }
    return views.list.slice();
  }

  /** The views of any list of messages, each remembered. */
  each(messages: readonly AgentMessage[]): Message[] {
    const out: Message[] = [];
    for (const m of messages) {
      let view = this.byMessage.get(m);
      if (view === undefined) {
        view = llmView(m);
        this.byMessage.set(m, view);
      }
      if (view !== null) out.push(view);
    }
    return out;
  }

  /** The context changed in place: convert it again. */
  reset(): void {
    this.context = undefined;
  }
}

/** What the provider sees of a message (`toLlmMessages` of one message); `null`: not sent. */
function llmView(message: AgentMessage): Message | null {
  if (message.role === 'extension') return null;
  return message.turnId === undefined ? message : (toLlmMessages([message])[0] ?? null);
}
