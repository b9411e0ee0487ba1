import type { ModelConfig, StreamEvent } from '../types/provider.js';
import type { StopReason } from '../types/message.js';
import { classifyStreamError } from '../sources/http/errors.js';
import { SSE_INVALID_LINE, parseSseJson, streamEndedEarly } from '../sources/http/sse.js';
import type { SseEvent } from '../sources/http/sse.js';
import type { AssistantMessageBuilder } from './message-builder.js';
import type { WireParser } from './provider-kit.js';
import { compatOf } from './openai-completions-compat.js';

/* The stream reader of OpenAI Chat Completions (spec 000 §5): chunks in, StreamEvents out. */


const FINISH_REASONS: Record<string, StopReason> = {
  stop: 'stop',
  end_turn: 'stop',
  length: 'length',
  max_tokens: 'length',
  tool_calls: 'toolUse',
  function_call: 'toolUse',
  content_filter: 'guardRail',
};

export interface ChatUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
  prompt_cache_hit_tokens?: number;
}

interface ChatDelta {
  content?: string | null | Array<{ type: string; text?: string; thinking?: Array<{ type: string; text?: string }> | string }>;
  reasoning_content?: string | null;
  reasoning?: string | null;
  reasoning_details?: Array<{ type?: string; text?: string; signature?: string | null; data?: string }> | null;
  tool_calls?: Array<{ index?: number; id?: string | null; function?: { name?: string | null; arguments?: string | null } }> | null;
}

interface ChatChunk {
  model?: string;
  choices?: Array<{ index?: number; delta?: ChatDelta | null; finish_reason?: string | null }>;
  usage?: ChatUsage | null;
  error?: { message?: string; type?: string; code?: string | number; status_code?: number } | string;
}

/** Usage in our terms: `input` excludes cached prompt tokens, which count as `cacheRead`. */
export function chatUsage(usage: ChatUsage): { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number; totalTokens: number } {
  const prompt = usage.prompt_tokens ?? 0;
  const cacheRead = usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens ?? 0;
  const cacheWrite = usage.prompt_tokens_details?.cache_write_tokens ?? 0;
  const output = usage.completion_tokens ?? 0;
  return {
    input: Math.max(0, prompt - cacheRead - cacheWrite),
    output,
    reasoning: usage.completion_tokens_details?.reasoning_tokens ?? 0,
    cacheRead,
    cacheWrite,
    totalTokens: usage.total_tokens ?? prompt + output,
  };
}

/**
 * Reads a Chat Completions chunk stream: `delta.content` (a string, or Mistral's array of text
 * and thinking parts), reasoning from `reasoning_content` or `reasoning` (+ OpenRouter's signed
 * `reasoning_details`), tool calls keyed by their `index` with argument fragments,
 * `finish_reason`, and usage (which arrives in a chunk of its own after the finish). `[DONE]`
 * completes the message; a body that ends after a finish_reason but without `[DONE]` completes
 * it too, and one that ends before any finish_reason is a retryable network error. Error chunks
 * (`{"error": ...}`, Groq's `event: error`) fail the stream, classified like HTTP errors.
 */
export function chatCompletionsReader(builder: AssistantMessageBuilder, model: ModelConfig, secrets: readonly string[] = []): WireParser<SseEvent> {
  const provider = model.provider;
  const reasoningFirst = compatOf(model).reasoningField === 'reasoning' ? 'reasoning' : 'reasoning_content';
  const toolKeys = new Set<string>();
  let finishReason: string | undefined;

  const finish = (): StreamEvent => {
    let stop: StopReason = finishReason ? (FINISH_REASONS[finishReason] ?? 'stop') : 'stop';
    // Several backends report "stop" for a turn that called tools.
    if (stop === 'stop' && builder.hasToolCalls()) stop = 'toolUse';
    return builder.finish(stop);
  };

  const fail = (error: ChatChunk['error']): never => {
    if (typeof error === 'string') throw classifyStreamError({ message: error, provider, secrets });
    const status = typeof error?.code === 'number' ? error.code : error?.status_code;
    throw classifyStreamError({
      message: error?.message ?? '',
      type: typeof error?.code === 'string' ? error.code : error?.type,
      status,
      provider,
      secrets,
    });
  };

  const onDelta = (delta: ChatDelta): StreamEvent[] => {
    const events: StreamEvent[] = [];
    const reasoning = delta[reasoningFirst] ?? delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === 'string' && reasoning !== '') events.push(builder.thinking(reasoning, 'reasoning'));
    for (const detail of delta.reasoning_details ?? []) {
      if (detail.signature) builder.thinkingSignature(detail.signature, 'reasoning', true);
    }
    if (typeof delta.content === 'string') {
      if (delta.content !== '') events.push(builder.text(delta.content, 'content'));
    } else if (Array.isArray(delta.content)) {
      for (const part of delta.content) {
        if (part.type === 'text' && part.text) events.push(builder.text(part.text, 'content'));
        else if (part.type === 'thinking') {
          const text = typeof part.thinking === 'string' ? part.thinking : (part.thinking ?? []).map((t) => t.text ?? '').join('');
          if (text) events.push(builder.thinking(text, 'reasoning'));
        }
      }
    }
    for (const [position, call] of (delta.tool_calls ?? []).entries()) {
      const key = `tool:${call.index ?? position}`;
      if (!toolKeys.has(key)) {
        toolKeys.add(key);
        events.push(builder.toolCallStart(call.id ?? '', call.function?.name ?? '', key));
      }
      const args = call.function?.arguments;
      if (typeof args === 'string' && args !== '') events.push(builder.toolCallDelta(args, key));
    }
    return events;
  };

  const onChunk = (chunk: ChatChunk): StreamEvent[] => {
    if (chunk.error) fail(chunk.error);
    if (chunk.model) builder.setModel(chunk.model);
    if (chunk.usage) builder.setUsage(chatUsage(chunk.usage));
    const events: StreamEvent[] = [];
    for (const choice of chunk.choices ?? []) {
      if ((choice.index ?? 0) !== 0) continue;
      if (choice.delta) events.push(...onDelta(choice.delta));
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
    return events;
  };

  return {
    push: (sse, emit) => {
      if (sse.data === '[DONE]') return emit(finish());
      if (sse.event === SSE_INVALID_LINE) {
        // Not SSE: some servers answer with a bare JSON error body and status 200.
        const bare = tryParseObject(sse.data);
        if (bare?.error) fail(bare.error);
        return;
      }
      const chunk = parseSseJson<ChatChunk>(sse.data, provider, secrets);
      if (sse.event === 'error') fail(chunk.error ?? { message: sse.data });
      onChunk(chunk).forEach(emit);
    },
    end: (emit) => {
      if (finishReason === undefined) throw streamEndedEarly(provider, 'a finish_reason and [DONE]');
      emit(finish());
    },
  };
}

function tryParseObject(text: string): ChatChunk | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as ChatChunk) : undefined;
  } catch {
    return undefined;
  }
}
