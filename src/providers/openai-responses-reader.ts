import type { StreamEvent } from '../types/provider.js';
import type { StopReason } from '../types/message.js';
import { ProviderError } from '../types/errors.js';
import { classifyStreamError, excerpt, parseSseJson, redactSecrets, SSE_INVALID_LINE, streamEndedEarly } from '../sources/http/index.js';
import type { SseEvent } from '../sources/http/index.js';
import type { AssistantMessageBuilder } from './message-builder.js';
import type { WireParser } from './provider-kit.js';
import type { ResponsesReasoningItem, ResponsesThinkingSignature } from './openai-responses.js';

/* The stream reader of the OpenAI Responses API: SSE events in, StreamEvents out. */


/** The fields of a Responses stream event that phi-rx reads. */
interface ResponsesEvent {
  type: string;
  output_index?: number;
  summary_index?: number;
  delta?: string;
  arguments?: string;
  item?: ResponsesOutputItem;
  response?: ResponsesResponse;
  code?: string | null;
  message?: string;
  error?: { code?: string | null; type?: string; message?: string } | null;
}

interface ResponsesOutputItem {
  type: string;
  id?: string;
  call_id?: string;
  name?: string;
  arguments?: string;
  content?: Array<{ type: string; text?: string; refusal?: string }>;
  summary?: Array<{ type: string; text?: string }>;
  encrypted_content?: string | null;
}

interface ResponsesResponse {
  model?: string;
  status?: string;
  usage?: ResponsesUsage | null;
  incomplete_details?: { reason?: string } | null;
  error?: { code?: string | null; message?: string } | null;
}

interface ResponsesUsage {
  input_tokens?: number;
  output_tokens?: number;
  total_tokens?: number;
  input_tokens_details?: { cached_tokens?: number } | null;
  output_tokens_details?: { reasoning_tokens?: number } | null;
}

/**
 * Parses Responses SSE events into StreamEvents. Output items are keyed by `output_index`, which
 * every server sends (item ids are not stable on all of them: OpenRouter renames items between
 * `added` and `completed`).
 */
export class ResponsesStreamParser implements WireParser<SseEvent> {
  private readonly streamed = new Set<string>();
  private readonly reasoning = new Map<number, ResponsesThinkingSignature>();
  private readonly reasoningDone = new Set<number>();

  constructor(
    private readonly builder: AssistantMessageBuilder,
    private readonly provider: string,
    private readonly secrets: readonly string[] = [],
  ) {}

  push(sse: SseEvent, emit: (event: StreamEvent) => void): void {
    if (sse.data === '[DONE]' || sse.data.trim() === '') return;
    if (sse.event === SSE_INVALID_LINE) throw this.invalidLine(sse.data);
    const event = parseSseJson<ResponsesEvent>(sse.data, this.provider, this.secrets);
    if (event === null || typeof event !== 'object' || typeof event.type !== 'string') {
      throw ProviderError.other(`${this.provider} sent a chunk without a type: ${excerpt(redactSecrets(sse.data, this.secrets))}`, {
        provider: this.provider,
      });
    }
    this.handle(event, emit);
  }

  end(): void {
    throw streamEndedEarly(this.provider, 'response.completed');
  }

  private handle(event: ResponsesEvent, emit: (event: StreamEvent) => void): void {
    const b = this.builder;
    const index = event.output_index ?? 0;
    switch (event.type) {
      case 'response.created':
      case 'response.in_progress':
        if (event.response?.model) b.setModel(event.response.model);
        return;
      case 'response.output_item.added':
        return this.itemAdded(index, event.item, emit);
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        if (typeof event.delta !== 'string') return;
        this.streamed.add(`text:${index}`);
        emit(b.text(event.delta, index));
        return;
      case 'response.reasoning_summary_part.added':
        // Summary parts are separate paragraphs of one thinking block.
        if ((event.summary_index ?? 0) > 0) emit(b.thinking('\n\n', index));
        return;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        if (typeof event.delta !== 'string') return;
        this.streamed.add(`thinking:${index}`);
        emit(b.thinking(event.delta, index));
        return;
      case 'response.function_call_arguments.delta':
        if (typeof event.delta !== 'string') return;
        this.streamed.add(`args:${index}`);
        emit(b.toolCallDelta(event.delta, index));
        return;
      case 'response.function_call_arguments.done':
        if (!this.streamed.has(`args:${index}`) && typeof event.arguments === 'string') {
          this.streamed.add(`args:${index}`);
          emit(b.toolCallDelta(event.arguments, index));
        }
        return;
      case 'response.output_item.done':
        return this.itemDone(index, event.item, emit);
      case 'response.completed':
      case 'response.incomplete':
        return this.complete(event.response, emit);
      case 'response.failed':
        throw this.streamError(event.response?.error ?? { message: `response failed (status ${event.response?.status ?? 'unknown'})` });
      case 'error':
        throw this.streamError(event.error ?? event);
      default:
        // content_part.*, output_text.done, annotations, web_search_call.*, ...: nothing to build.
        return;
    }
  }

  private itemAdded(index: number, item: ResponsesOutputItem | undefined, emit: (event: StreamEvent) => void): void {
    if (!item) return;
    const previous = this.reasoning.get(index - 1);
    if (previous && item.id && (item.type === 'message' || item.type === 'function_call')) {
      previous.followedBy = item.id;
      if (this.reasoningDone.has(index - 1)) this.builder.thinkingSignature(JSON.stringify(previous), index - 1);
    }
    if (item.type === 'function_call') {
      this.streamed.add(`call:${index}`);
      emit(this.builder.toolCallStart(item.call_id ?? item.id ?? `call_${index}`, item.name ?? '', index));
    } else if (item.type === 'reasoning') {
      this.reasoning.set(index, { reasoning: reasoningItem(item) });
    }
  }

  private itemDone(index: number, item: ResponsesOutputItem | undefined, emit: (event: StreamEvent) => void): void {
    if (!item) return;
    const b = this.builder;
    if (item.type === 'reasoning') {
      const entry = this.reasoning.get(index) ?? {};
      const signature: ResponsesThinkingSignature = { ...entry, reasoning: reasoningItem(item) };
      this.reasoning.set(index, signature);
      this.reasoningDone.add(index);
      if (!this.streamed.has(`thinking:${index}`)) {
        const text = reasoningText(item);
        if (text !== '') emit(b.thinking(text, index));
      }
      b.thinkingSignature(JSON.stringify(signature), index);
    } else if (item.type === 'function_call') {
      if (!this.streamed.has(`call:${index}`)) {
        this.streamed.add(`call:${index}`);
        emit(b.toolCallStart(item.call_id ?? item.id ?? `call_${index}`, item.name ?? '', index));
      }
      if (!this.streamed.has(`args:${index}`)) {
        this.streamed.add(`args:${index}`);
        emit(b.toolCallDelta(item.arguments ?? '', index));
      }
    } else if (item.type === 'message' && !this.streamed.has(`text:${index}`)) {
      const text = (item.content ?? []).map((c) => c.text ?? c.refusal ?? '').join('');
      if (text !== '') emit(b.text(text, index));
    }
  }

  private complete(response: ResponsesResponse | undefined, emit: (event: StreamEvent) => void): void {
    const b = this.builder;
    if (response?.model) b.setModel(response.model);
    const usage = response?.usage;
    if (usage) {
      const cached = usage.input_tokens_details?.cached_tokens ?? 0;
      b.setUsage({
        input: (usage.input_tokens ?? 0) - cached,
        output: usage.output_tokens ?? 0,
        reasoning: usage.output_tokens_details?.reasoning_tokens ?? 0,
        cacheRead: cached,
        cacheWrite: 0,
        totalTokens: usage.total_tokens ?? 0,
      });
    }
    emit(b.finish(this.stopReason(response)));
  }

  private stopReason(response: ResponsesResponse | undefined): StopReason {
    if (response?.status === 'incomplete') {
      return response.incomplete_details?.reason === 'max_output_tokens' ? 'length' : 'stop';
    }
    return this.builder.hasToolCalls() ? 'toolUse' : 'stop';
  }

  private streamError(error: { code?: string | null; type?: string; message?: string }): ProviderError {
    return classifyStreamError({
      message: error.message ?? '',
      type: error.code ?? error.type,
      provider: this.provider,
      secrets: this.secrets,
    });
  }

  private invalidLine(line: string): ProviderError {
    // A bare JSON error object sent with status 200 (some proxies do this).
    try {
      const parsed = JSON.parse(line) as ResponsesEvent;
      if (parsed && typeof parsed === 'object' && parsed.error) return this.streamError(parsed.error);
    } catch {
      // not JSON: fall through
    }
    return ProviderError.other(`${this.provider} sent a line that is not SSE: ${excerpt(redactSecrets(line, this.secrets))}`, {
      provider: this.provider,
    });
  }
}

function reasoningItem(item: ResponsesOutputItem): ResponsesReasoningItem {
  const out: ResponsesReasoningItem = {
    type: 'reasoning',
    id: item.id ?? '',
    summary: (item.summary ?? []).map((s) => ({ type: 'summary_text' as const, text: s.text ?? '' })),
  };
  if (typeof item.encrypted_content === 'string') out.encrypted_content = item.encrypted_content;
  const content = (item.content ?? []).filter((c) => c.type === 'reasoning_text');
  if (content.length > 0) out.content = content.map((c) => ({ type: 'reasoning_text' as const, text: c.text ?? '' }));
  return out;
}

function reasoningText(item: ResponsesOutputItem): string {
  const summary = (item.summary ?? []).map((s) => s.text ?? '').filter((t) => t !== '');
  if (summary.length > 0) return summary.join('\n\n');
  return (item.content ?? []).map((c) => (c.type === 'reasoning_text' ? c.text ?? '' : '')).join('');
}
