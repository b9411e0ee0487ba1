import { type AgentMessage, type Message, toLlmMessages } from '../types/message.js';

/**
 * What the provider sees of a run's messages (`toLlmMessages`), converted once per message:
 * messages are not changed once recorded, and converting the whole conversation again on every
 * turn would make a long run quadratic in conversions.
 */
export class LlmViews {
  /** Views of arbitrary message lists (a transformed context), remembered per message. */
  private byMessage: WeakMap<AgentMessage, Message | null> | undefined;
  /** The context last converted, and the view of each of its messages (`null`: not sent). */
  private source: readonly AgentMessage[] = [];
  private readonly views: (Message | null)[] = [];

  /**
   * The views of a run's context. Each turn's context is a new array that starts with the last
   * one's messages: the views of that common prefix (compared by identity, so a compacted or
   * edited context is converted again from where it differs) are kept, the rest converted.
   */
  of(messages: readonly AgentMessage[]): Message[] {
    const previous = this.source;
    const shared = Math.min(previous.length, messages.length);
    let same = 0;
    while (same < shared && previous[same] === messages[same]) same++;
    const views = this.views;
    views.length = same;
    // Each message is converted once here (no WeakMap entry: a table the GC must walk on every collection).
    for (let i = same; i < messages.length; i++) views.push(llmView(messages[i]!));
    this.source = messages;
    const out: Message[] = [];
    for (const view of views) if (view !== null) out.push(view);
    return out;
  }

  /** The views of any list of messages, each remembered. */
  each(messages: readonly AgentMessage[]): Message[] {
    const out: Message[] = [];
    // Made on first use: a run that sends its context as it is never needs it.
    const byMessage = (this.byMessage ??= new WeakMap());
    for (const m of messages) {
      let view = byMessage.get(m);
      if (view === undefined) {
        view = llmView(m);
        byMessage.set(m, view);
      }
      if (view !== null) out.push(view);
    }
    return out;
  }
}

/** What the provider sees of a message (`toLlmMessages` of one message); `null`: not sent. */
function llmView(message: AgentMessage): Message | null {
  if (message.role === 'extension') return null;
  return message.turnId === undefined ? message : (toLlmMessages([message])[0] ?? null);
}
