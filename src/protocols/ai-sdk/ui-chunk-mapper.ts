import type { AgentEvent, AgentEndEvent, MessageEndEvent, MessageUpdateEvent } from '../../types/events.js';
import type { AssistantMessage, StopReason, ToolResultMessage } from '../../types/message.js';
import type { ToolResult } from '../../types/tool.js';
import type { PhiDataChunk, UIFinishReason, UIMessageChunk } from './ui-message-chunk.js';

/** Options of `uiMessageChunks()`. */
export interface UIMessageChunksOptions {
  /** The id of the assistant message the stream builds (sent in the `start` chunk); by default the client picks one. */
  messageId?: string;
  /** Mark tool parts `dynamic` (`dynamic-tool` parts in `useChat`, for tools the page has no types for); default false: `tool-<name>` parts. */
  dynamicTools?: boolean;
  /** The `errorText` of a failed run (default: the error's message). */
  errorText?: (error: unknown) => string;
}

/** An open text or reasoning part of the streaming assistant message. */
interface OpenPart {
  readonly id: string;
  readonly kind: 'text' | 'reasoning';
}

/**
 * The state machine behind `uiMessageChunks()`: one phi-rx event in, the chunks it becomes out.
 * It keeps only ids (of open parts, of tool calls seen), never the text: a delta becomes one
 * chunk holding that delta, whatever the length of the message so far.
 */
export class UIChunkMapper {
  private mainLoop: string | undefined;
  private parts = new Map<number, OpenPart>(); // content index -> open part
  private calls = new Map<number, string>(); // content index -> tool call id, of the streaming message
  private streamed = new Set<number>(); // content indices of the streaming message that had deltas
  private readonly inputs = new Set<string>(); // tool calls with a tool-input-available
  private readonly answered = new Set<string>(); // tool calls with an output chunk
  private nextPart = 0;
  private answering = false; // an assistant message started
  private ended = false;

  constructor(private readonly options: UIMessageChunksOptions = {}) {}

  /** The chunks of one event. */
  map(event: AgentEvent): UIMessageChunk[] {
    if (this.ended) return [];
    if (event.type === 'AgentStart' && this.mainLoop === undefined && event.parentLoopId === undefined) {
      this.mainLoop = event.loopId;
      const start: UIMessageChunk = this.options.messageId === undefined ? { type: 'start' } : { type: 'start', messageId: this.options.messageId };
      return [start, data(event)];
    }
    if (this.mainLoop === undefined || ('loopId' in event && event.loopId !== this.mainLoop)) return [data(event, true)];
    switch (event.type) {
      case 'TurnStart':
        return [{ type: 'start-step' }, data(event, true)];
      case 'TurnEnd':
        return [...this.closeParts(), { type: 'finish-step' }, data({ type: 'TurnEnd', turnIndex: event.turnIndex, usage: event.usage }, true)];
      case 'MessageUpdate':
        return this.delta(event);
      case 'MessageReset':
        return this.reset(event);
      case 'MessageEnd':
        return this.messageEnd(event);
      case 'MessageStart':
        if (event.message.role === 'assistant') this.answering = true;
        return [];
      case 'ToolExecutionStart':
        return [data(event, true)];
      case 'ToolExecutionUpdate':
        // a preliminary output of a call the client knows; otherwise (no part to put it in) the event as data
        if (this.answered.has(event.toolCallId) || !this.inputs.has(event.toolCallId)) return [data(event, true)];
        return [{ ...this.tool(), type: 'tool-output-available', toolCallId: event.toolCallId, output: outputOf(event.partialResult), preliminary: true }];
      case 'ToolExecutionEnd':
        return [...this.output(event.toolCallId, event.result, event.isError), data({ type: event.type, toolCallId: event.toolCallId, toolName: event.toolName, isError: event.isError, childLoopId: event.childLoopId }, true)];
      case 'ToolApprovalRequested':
        return [...this.ensureInput(event.toolCallId, event.toolName, event.args), { type: 'tool-approval-request', approvalId: event.toolCallId, toolCallId: event.toolCallId }];
      case 'ToolApprovalResolved':
        return [data(event), ...(event.approved || this.answered.has(event.toolCallId) ? [] : this.denied(event.toolCallId))];
      case 'AgentEnd':
        return this.end(event);
      default:
        return [data(event)];
    }
  }

  /** The chunks that end the stream when the run failed. */
  fail(error: unknown): UIMessageChunk[] {
    if (this.ended) return [];
    this.ended = true;
    const text = this.options.errorText ? this.options.errorText(error) : error instanceof Error ? error.message : String(error);
    return [...this.closeParts(), { type: 'error', errorText: text }];
  }

  private delta(event: MessageUpdateEvent): UIMessageChunk[] {
    const { delta } = event;
    this.streamed.add(delta.contentIndex);
    if (delta.type === 'toolCall') {
      let id = this.calls.get(delta.contentIndex);
      const out: UIMessageChunk[] = [];
      if (id === undefined) {
        const call = event.message.content[delta.contentIndex];
        id = delta.id ?? (call?.type === 'toolCall' ? call.id : `call-${delta.contentIndex}`);
        const name = delta.name ?? (call?.type === 'toolCall' ? call.name : '');
        this.calls.set(delta.contentIndex, id);
        out.push({ ...this.tool(), type: 'tool-input-start', toolCallId: id, toolName: name });
      }
      if (delta.delta !== '') out.push({ type: 'tool-input-delta', toolCallId: id, inputTextDelta: delta.delta });
      return out;
    }
    const kind = delta.type === 'text' ? 'text' : 'reasoning';
    let part = this.parts.get(delta.contentIndex);
    const out: UIMessageChunk[] = [];
    if (part === undefined || part.kind !== kind) {
      if (part) out.push(...this.closePart(delta.contentIndex, part));
      part = { id: `${kind === 'text' ? 't' : 'r'}${this.nextPart++}`, kind };
      this.parts.set(delta.contentIndex, part);
      out.push({ type: `${kind}-start`, id: part.id });
    }
    if (delta.delta !== '') out.push({ type: `${kind}-delta`, id: part.id, delta: delta.delta });
    return out;
  }

  private reset(event: { type: 'MessageReset'; reason: string; loopId: string; timestamp: number }): UIMessageChunk[] {
    const out = this.closeParts();
    this.calls = new Map();
    this.streamed = new Set();
    out.push(data({ type: event.type, reason: event.reason, loopId: event.loopId, timestamp: event.timestamp }));
    return out;
  }

  private messageEnd(event: MessageEndEvent): UIMessageChunk[] {
    const message = event.message;
    if (message.role === 'assistant') return this.assistantEnd(message);
    if (message.role === 'toolResult') return this.toolResultEnd(message);
    // a user message before the first answer is the request's own prompt: the client has it
    if (message.role === 'user' && !this.answering) return [];
    return [data({ type: 'MessageEnd', loopId: event.loopId, message: event.message })];
  }

  private assistantEnd(message: AssistantMessage): UIMessageChunk[] {
    const out: UIMessageChunk[] = [];
    message.content.forEach((block, index) => {
      const part = this.parts.get(index);
      if (block.type === 'thinking' && part?.kind === 'reasoning') {
        const meta = block.signature !== undefined || block.redacted ? { phi: { signature: block.signature ?? null, redacted: block.redacted === true } } : undefined;
        this.parts.delete(index);
        out.push(meta ? { type: 'reasoning-end', id: part.id, providerMetadata: meta } : { type: 'reasoning-end', id: part.id });
      } else if ((block.type === 'text' || block.type === 'thinking') && !this.streamed.has(index)) {
        out.push(...this.wholeBlock(block.type === 'text' ? 'text' : 'reasoning', block.type === 'text' ? block.text : block.thinking));
      } else if (block.type === 'toolCall') {
        if (!this.calls.has(index)) out.push({ ...this.tool(), type: 'tool-input-start', toolCallId: block.id, toolName: block.name });
        out.push(...this.ensureInput(block.id, block.name, block.arguments));
      }
    });
    out.push(...this.closeParts());
    this.calls = new Map();
    this.streamed = new Set();
    if (message.stopReason === 'error') out.push({ type: 'error', errorText: message.errorMessage ?? 'the model call failed' });
    return out;
  }

  /** A block the provider gave whole (no deltas): its part in one go. */
  private wholeBlock(kind: 'text' | 'reasoning', text: string): UIMessageChunk[] {
    if (text === '') return [];
    const id = `${kind === 'text' ? 't' : 'r'}${this.nextPart++}`;
    return [{ type: `${kind}-start`, id }, { type: `${kind}-delta`, id, delta: text }, { type: `${kind}-end`, id }];
  }

  private toolResultEnd(message: ToolResultMessage): UIMessageChunk[] {
    return this.output(message.toolCallId, { content: message.content, details: message.details }, message.isError);
  }

  private ensureInput(toolCallId: string, toolName: string, input: Record<string, unknown>): UIMessageChunk[] {
    if (this.inputs.has(toolCallId)) return [];
    this.inputs.add(toolCallId);
    return [{ ...this.tool(), type: 'tool-input-available', toolCallId, toolName, input }];
  }

  private output(toolCallId: string, result: ToolResult, isError: boolean): UIMessageChunk[] {
    if (this.answered.has(toolCallId) || !this.inputs.has(toolCallId)) return [];
    this.answered.add(toolCallId);
    if (isError) return [{ ...this.tool(), type: 'tool-output-error', toolCallId, errorText: textOfResult(result) }];
    return [{ ...this.tool(), type: 'tool-output-available', toolCallId, output: outputOf(result) }];
  }

  private denied(toolCallId: string): UIMessageChunk[] {
    this.answered.add(toolCallId);
    return [{ type: 'tool-output-denied', toolCallId }];
  }

  private end(event: AgentEndEvent): UIMessageChunk[] {
    this.ended = true;
    const { messages: _messages, ...rest } = event;
    const out = [...this.closeParts(), data(rest)];
    if (event.stopReason === 'aborted') out.push({ type: 'abort', reason: 'the run was aborted' });
    else out.push({ type: 'finish', finishReason: finishReasonOf(event.stopReason) });
    return out;
  }

  private closeParts(): UIMessageChunk[] {
    const out: UIMessageChunk[] = [];
    for (const [index, part] of this.parts) out.push(...this.closePart(index, part));
    return out;
  }

  private closePart(index: number, part: OpenPart): UIMessageChunk[] {
    this.parts.delete(index);
    return [{ type: `${part.kind}-end`, id: part.id }];
  }

  private tool(): { dynamic?: boolean } {
    return this.options.dynamicTools ? { dynamic: true } : {};
  }
}

/** A `data-phi-<kebab-case event type>` chunk holding the event (its `type` in the chunk's). */
function data<E extends { type: string }>(event: E, transient = false): UIMessageChunk {
  const { type, ...rest } = event;
  const body = type === 'MessageUpdate' ? slimUpdate(event as unknown as MessageUpdateEvent) : rest;
  const chunk: PhiDataChunk = { type: `data-phi-${kebab(type)}`, data: body };
  if (transient) chunk.transient = true;
  return chunk;
}

/** An update of another loop without its growing message snapshot: the delta is what changed. */
function slimUpdate(event: MessageUpdateEvent): object {
  return { loopId: event.loopId, delta: event.delta, timestamp: event.timestamp };
}

function kebab(type: string): string {
  return type.replace(/[A-Z]/g, (c, at: number) => (at === 0 ? '' : '-') + c.toLowerCase());
}

/** A tool's output as the client sees it: the phi-rx result (content blocks, details when set). */
function outputOf(result: ToolResult): unknown {
  return result.details === undefined ? { content: result.content } : { content: result.content, details: result.details };
}

function textOfResult(result: ToolResult): string {
  const text = result.content.map((c) => (c.type === 'text' ? c.text : `[${c.mimeType} image]`)).join('\n');
  return text === '' ? 'the tool failed' : text;
}

/** The AI SDK's finish reason for a phi-rx stop reason. */
export function finishReasonOf(stop: StopReason): UIFinishReason {
  switch (stop) {
    case 'stop':
      return 'stop';
    case 'length':
      return 'length';
    case 'toolUse':
      return 'tool-calls';
    case 'error':
      return 'error';
    case 'guardRail':
      return 'content-filter';
    default:
      return 'other';
  }
}

