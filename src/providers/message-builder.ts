import type { AssistantMessage, StopReason } from '../types/message.js';
import type { StreamEvent } from '../types/provider.js';
import type { TextContent, ThinkingContent, ToolCall } from '../types/content.js';
import { Usage } from '../types/usage.js';
import { ProviderError } from '../types/errors.js';

/**
 * Builds one streamed AssistantMessage and the StreamEvents that describe it. Every provider
 * uses it, so that the partial message is assembled one way only. `partial` is the builder's own
 * draft (mutated as deltas arrive); every event carries an immutable **snapshot** of it instead: a
 * new message object whose unchanged content blocks are the same objects as in the snapshot before,
 * so a UI can keep a reference and compare by identity. A delta costs the changed block, the
 * content array and the message object (text itself is shared, never copied). Tool-call argument
 * JSON is buffered and parsed once, at `finish`; an argument delta changes nothing visible, so its
 * event carries the previous snapshot.
 */
export class AssistantMessageBuilder {
  /** The draft: mutated in place while the message streams. Events never carry it (until `done`). */
  readonly partial: AssistantMessage;
  /** Snapshot copies of the draft's blocks, by content index. */
  private readonly shown: AssistantMessage['content'] = [];
  private last: AssistantMessage | undefined;
  /** The message as it was before its first content change: what `start()` shows, however late it is called. */
  private opening: AssistantMessage | undefined;
  /** Blocks changed without an event of their own (a signature): copied by the next snapshot. */
  private touched: number[] = [];
  /** Each tool call's argument JSON so far, by content index (other blocks leave a hole). */
  private argBuffers: (string | undefined)[] = [];
  /**
   * The keyed blocks: kind, key and content index of each, side by side (a message has a handful:
   * a scan finds one, with no Map per message).
   */
  private keyed: { kinds: BlockKind[]; keys: (string | number)[]; indices: number[] } | undefined;

  constructor(model: string, provider: string, timestamp: number) {
    this.partial = {
      role: 'assistant',
      content: [],
      stopReason: 'stop',
      model,
      provider,
      usage: Usage.empty(),
      timestamp,
    };
  }

  /**
   * The `start` event: the message before any content arrived. A wire parser may call it only
   * when the first delta is already in the draft; it still shows no content.
   */
  start(): StreamEvent {
    return { type: 'start', partial: this.opening ?? this.snapshot(-1) };
  }

  /** Remembers the message as it was, before the first change to its content. */
  private open(): void {
    this.opening ??= { ...this.partial, content: [] };
  }

  /**
   * Marks a block of the draft changed by a provider that edits `partial` directly (a signature
   * set on a block): the next snapshot shows the change.
   */
  touch(contentIndex: number): void {
    this.touched.push(contentIndex);
  }

  /** An immutable view of the draft: block `changed` (and any touched one) copied anew, the others shared. */
  private snapshot(changed: number): AssistantMessage {
    const draft = this.partial.content;
    const shown = this.shown;
    // Blocks new since the last snapshot are copied once here (a new block is the one changed, as a rule).
    const copied = shown.length;
    for (let i = copied; i < draft.length; i++) shown.push({ ...draft[i]! });
    if (changed >= 0 && changed < copied) shown[changed] = { ...draft[changed]! };
    const touched = this.touched;
    if (touched.length > 0) {
      for (const i of touched) if (i < copied && i !== changed) shown[i] = { ...draft[i]! };
      touched.length = 0;
    }
    return (this.last = { ...this.partial, content: shown.slice() });
  }

  /**
   * Appends text. `key` names the provider's block (its index or item id) so that interleaved
   * blocks stay apart; without a key the last text block is continued. Keys are compared as given
   * (`1` and `'1'` name different blocks).
   */
  text(delta: string, key?: string | number): StreamEvent {
    const index = this.blockIndex('text', key);
    (this.partial.content[index] as TextContent).text += delta;
    return { type: 'textDelta', contentIndex: index, delta, partial: this.snapshot(index) };
  }

  thinking(delta: string, key?: string | number): StreamEvent {
    const index = this.blockIndex('thinking', key);
    (this.partial.content[index] as ThinkingContent).thinking += delta;
    return { type: 'thinkingDelta', contentIndex: index, delta, partial: this.snapshot(index) };
  }

  /** Sets (or extends, for providers that stream it) the signature of a thinking block. */
  thinkingSignature(signature: string, key?: string | number, append = false): void {
    const index = this.blockIndex('thinking', key);
    const block = this.partial.content[index] as ThinkingContent;
    block.signature = append && block.signature ? block.signature + signature : signature;
    this.touched.push(index);
  }

  /** Redacted (encrypted) thinking: no text, the payload rides in `signature`. */
  redactedThinking(data: string, key?: string | number): StreamEvent {
    const index = this.blockIndex('thinking', key);
    const block = this.partial.content[index] as ThinkingContent;
    block.redacted = true;
    block.signature = data;
    return { type: 'thinkingDelta', contentIndex: index, delta: '', partial: this.snapshot(index) };
  }

  toolCallStart(id: string, name: string, key?: string | number): StreamEvent {
    const index = this.blockIndex('toolCall', key ?? id);
    const block = this.partial.content[index] as ToolCall;
    if (id) block.id = id;
    if (name) block.name = name;
    this.argBuffers[index] ??= '';
    return { type: 'toolCallStart', contentIndex: index, id: block.id, name: block.name, partial: this.snapshot(index) };
  }

  toolCallDelta(delta: string, key?: string | number): StreamEvent {
    const index = this.blockIndex('toolCall', key);
    this.argBuffers[index] = (this.argBuffers[index] ?? '') + delta;
    return { type: 'toolCallDelta', contentIndex: index, delta, partial: this.last ?? this.snapshot(index) };
  }

  /** A tool call that arrives whole (Gemini): start plus the full arguments. */
  toolCallComplete(id: string, name: string, args: Record<string, unknown>, key?: string | number): StreamEvent[] {
    const start = this.toolCallStart(id, name, key ?? id);
    const index = (start as { contentIndex: number }).contentIndex;
    const json = JSON.stringify(args);
    this.argBuffers[index] = json;
    return [start, { type: 'toolCallDelta', contentIndex: index, delta: json, partial: this.last ?? this.snapshot(index) }];
  }

  /** Replaces the usage object (snapshots already handed out keep theirs). */
  setUsage(usage: Partial<Usage>): void {
    const u = (this.partial.usage = { ...this.partial.usage, ...usage });
    if (!usage.totalTokens) u.totalTokens = u.input + u.output + u.cacheRead + u.cacheWrite;
  }

  setModel(model: string): void {
    if (model) this.partial.model = model;
  }

  hasToolCalls(): boolean {
    return this.partial.content.some((c) => c.type === 'toolCall');
  }

  /**
   * Completes the message: parses buffered tool arguments and sets the stop reason. Arguments
   * that are not valid JSON fail the stream with a ProviderError naming the call, unless the
   * message was cut short (`length`), where the truncation guard deals with them.
   */
  finish(stopReason: StopReason, errorMessage?: string): StreamEvent {
    const buffers = this.argBuffers;
    for (let index = 0; index < buffers.length; index++) {
      const json = buffers[index];
      if (json === undefined) continue;
      const block = this.partial.content[index] as ToolCall;
      if (json.trim() === '') {
        block.arguments = {};
        continue;
      }
      try {
        const parsed: unknown = JSON.parse(json);
        block.arguments = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
          ? (parsed as Record<string, unknown>)
          : { value: parsed };
      } catch (e) {
        if (stopReason === 'length') {
          block.arguments = {};
          continue;
        }
        throw ProviderError.other(
          `Malformed tool-call arguments for "${block.name}" (${block.id}): ${(e as Error).message}; received: ${json.slice(0, 200)}`,
          { provider: this.partial.provider },
        );
      }
    }
    this.argBuffers = [];
    for (const block of this.partial.content) flattenText(block);
    this.partial.stopReason = stopReason;
    if (errorMessage !== undefined) this.partial.errorMessage = errorMessage;
    return { type: 'done', message: this.partial };
  }

  /** The block a delta goes to, made when it is new. Runs once per delta: no key strings, no closures. */
  private blockIndex(kind: BlockKind, key: string | number | undefined): number {
    this.open();
    const content = this.partial.content;
    if (key === undefined) {
      const last = content.length - 1;
      if (last >= 0 && content[last]!.type === kind) return last;
      return content.push(newBlock(kind)) - 1;
    }
    const keyed = (this.keyed ??= { kinds: [], keys: [], indices: [] });
    for (let i = keyed.keys.length - 1; i >= 0; i--) {
      if (keyed.keys[i] === key && keyed.kinds[i] === kind) return keyed.indices[i]!;
    }
    const index = content.push(newBlock(kind)) - 1;
    keyed.kinds.push(kind);
    keyed.keys.push(key);
    keyed.indices.push(index);
    return index;
  }
}

type BlockKind = 'text' | 'thinking' | 'toolCall';

function newBlock(kind: BlockKind): TextContent | ThinkingContent | ToolCall {
  if (kind === 'text') return { type: 'text', text: '' };
  if (kind === 'thinking') return { type: 'thinking', thinking: '' };
  return { type: 'toolCall', id: '', name: '', arguments: {} };
}

/**
 * Text appended delta by delta is a rope in V8: one cons-string node per delta, about 56 bytes per
 * 4-character delta, kept for as long as the conversation is. Reading one character makes V8
 * flatten the rope in place (one copy of the text), so a finished message holds plain strings.
 */
function flattenText(block: AssistantMessage['content'][number]): void {
  if (block.type === 'text') block.text.charCodeAt(0);
  else if (block.type === 'thinking') block.thinking.charCodeAt(0);
}
