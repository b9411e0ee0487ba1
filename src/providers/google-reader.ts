import type { StreamEvent } from '../types/provider.js';
import type { Message, StopReason } from '../types/message.js';
import { ProviderError } from '../types/errors.js';
import { classifyStreamError, excerpt, parseSseJson, redactSecrets, SSE_INVALID_LINE, streamEndedEarly } from '../sources/http/index.js';
import type { SseEvent } from '../sources/http/index.js';
import type { AssistantMessageBuilder } from './message-builder.js';
import type { WireParser } from './provider-kit.js';

/* The stream reader of Gemini's `streamGenerateContent?alt=sse` (Gemini API and Vertex AI). */


interface GoogleChunk {
  candidates?: Array<{
    content?: { parts?: GoogleResponsePart[] };
    finishReason?: string;
    finishMessage?: string;
  }>;
  usageMetadata?: {
    promptTokenCount?: number;
    candidatesTokenCount?: number;
    thoughtsTokenCount?: number;
    cachedContentTokenCount?: number;
    toolUsePromptTokenCount?: number;
    totalTokenCount?: number;
  };
  modelVersion?: string;
  error?: { code?: number; message?: string; status?: string };
}

interface GoogleResponsePart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: {
    name?: string;
    args?: Record<string, unknown>;
    id?: string;
    /** Vertex Gemini 3 streams arguments as JSON-path fragments. */
    partialArgs?: PartialArg[];
    willContinue?: boolean;
  };
}

interface PartialArg {
  jsonPath?: string;
  stringValue?: string;
  numberValue?: number;
  boolValue?: boolean;
  nullValue?: unknown;
  willContinue?: boolean;
}

/** A function call whose arguments arrive in `partialArgs` fragments. */
interface StreamedCall {
  key: number;
  args: Record<string, unknown>;
}

const SAFETY_STOPS = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'LANGUAGE', 'OTHER', 'MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL']);

/**
 * Parses Gemini SSE chunks. Gemini has no terminal event: the stream is complete when the body
 * ends after a chunk that carried a `finishReason`.
 */
export class GoogleStreamParser implements WireParser<SseEvent> {
  private finishReason: string | undefined;
  private finishMessage: string | undefined;
  private calls: number;
  private streamedCall: StreamedCall | undefined;
  private signedBlocks = 0;

  /** `firstCallIndex`: where invented ids start, so they do not repeat those of earlier turns (see {@link nextInventedCallIndex}). */
  constructor(
    private readonly builder: AssistantMessageBuilder,
    private readonly provider: string,
    private readonly idPrefix: string,
    private readonly secrets: readonly string[] = [],
    firstCallIndex = 0,
  ) {
    this.calls = firstCallIndex;
  }

  push(sse: SseEvent, emit: (event: StreamEvent) => void): void {
    if (sse.data.trim() === '' || sse.data === '[DONE]') return;
    const chunk =
      sse.event === SSE_INVALID_LINE ? this.invalidLine(sse.data) : parseSseJson<GoogleChunk>(sse.data, this.provider, this.secrets);
    if (chunk === null || typeof chunk !== 'object') {
      throw ProviderError.other(`${this.provider} sent a chunk that is not an object: ${excerpt(redactSecrets(sse.data, this.secrets))}`, {
        provider: this.provider,
      });
    }
    if (chunk.error) throw this.streamError(chunk.error);
    if (chunk.modelVersion) this.builder.setModel(chunk.modelVersion);
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) this.part(part, emit);
    if (candidate?.finishReason) {
      this.finishReason = candidate.finishReason;
      this.finishMessage = candidate.finishMessage;
    }
    if (chunk.usageMetadata) this.usage(chunk.usageMetadata);
  }

  end(emit: (event: StreamEvent) => void): void {
    if (this.finishReason === undefined) throw streamEndedEarly(this.provider, 'a chunk with finishReason');
    this.closeStreamedCall(emit);
    emit(this.builder.finish(this.stopReason(), this.errorMessage()));
  }

  private part(part: GoogleResponsePart, emit: (event: StreamEvent) => void): void {
    const b = this.builder;
    if (part.thoughtSignature) this.signature(part.thoughtSignature, emit);
    const call = part.functionCall;
    if (call) return this.functionCall(call, emit);
    if (typeof part.text !== 'string' || part.text === '') return;
    emit(part.thought ? b.thinking(part.text) : b.text(part.text));
  }

  /** Puts a part's signature on the thinking block before it, creating an empty one if needed. */
  private signature(signature: string, emit: (event: StreamEvent) => void): void {
    const partial = this.builder.partial;
    const last = partial.content[partial.content.length - 1];
    if (last?.type === 'thinking' && last.signature === undefined) {
      last.signature = signature;
      this.builder.touch(partial.content.length - 1);
      return;
    }
    // A new empty block, announced so that content indices in later events never skip one. Made
    // through the builder: an event carries its snapshot, never the draft it goes on editing.
    const key = `signature-${this.signedBlocks++}`;
    this.builder.thinkingSignature(signature, key);
    emit(this.builder.thinking('', key));
  }

  private functionCall(call: NonNullable<GoogleResponsePart['functionCall']>, emit: (event: StreamEvent) => void): void {
    const b = this.builder;
    if (call.name && call.willContinue && !call.args) {
      // The start of a call whose arguments follow in partialArgs fragments.
      this.closeStreamedCall(emit);
      const key = this.calls++;
      this.streamedCall = { key, args: {} };
      emit(b.toolCallStart(call.id ?? `${this.idPrefix}${key}`, call.name, `fc${key}`));
      return;
    }
    if (call.partialArgs && this.streamedCall) {
      for (const fragment of call.partialArgs) applyPartialArg(this.streamedCall.args, fragment);
      return;
    }
    if (!call.name) {
      // `functionCall: {}` closes a streamed call.
      this.closeStreamedCall(emit);
      return;
    }
    this.closeStreamedCall(emit);
    const key = this.calls++;
    for (const event of b.toolCallComplete(call.id ?? `${this.idPrefix}${key}`, call.name, call.args ?? {}, `fc${key}`)) emit(event);
  }

  private closeStreamedCall(emit: (event: StreamEvent) => void): void {
    const call = this.streamedCall;
    if (!call) return;
    this.streamedCall = undefined;
    emit(this.builder.toolCallDelta(JSON.stringify(call.args), `fc${call.key}`));
  }

  private usage(u: NonNullable<GoogleChunk['usageMetadata']>): void {
    const cached = u.cachedContentTokenCount ?? 0;
    const thoughts = u.thoughtsTokenCount ?? 0;
    this.builder.setUsage({
      // Tool-use prompt tokens (grounding, code execution) are billed as input.
      input: (u.promptTokenCount ?? 0) + (u.toolUsePromptTokenCount ?? 0) - cached,
      output: (u.candidatesTokenCount ?? 0) + thoughts,
      reasoning: thoughts,
      cacheRead: cached,
      cacheWrite: 0,
      totalTokens: u.totalTokenCount ?? 0,
    });
  }

  private stopReason(): StopReason {
    if (this.finishReason === 'MAX_TOKENS') return 'length';
    if (SAFETY_STOPS.has(this.finishReason ?? '')) return 'error';
    return this.builder.hasToolCalls() ? 'toolUse' : 'stop';
  }

  private errorMessage(): string | undefined {
    if (!SAFETY_STOPS.has(this.finishReason ?? '')) return undefined;
    return `${this.provider} stopped with finishReason ${this.finishReason}${this.finishMessage ? `: ${this.finishMessage}` : ''}`;
  }

  private streamError(error: NonNullable<GoogleChunk['error']>): ProviderError {
    return classifyStreamError({
      message: error.message ?? '',
      type: error.status,
      status: error.code,
      provider: this.provider,
      secrets: this.secrets,
    });
  }

  private invalidLine(line: string): GoogleChunk {
    // A bare JSON error (or an error array) in place of SSE.
    try {
      const parsed = JSON.parse(line) as GoogleChunk | GoogleChunk[];
      const chunk = Array.isArray(parsed) ? parsed[0] : parsed;
      if (chunk?.error) return chunk;
    } catch {
      // not JSON
    }
    throw ProviderError.other(`${this.provider} sent a line that is not SSE: ${excerpt(redactSecrets(line, this.secrets))}`, {
      provider: this.provider,
    });
  }
}

/**
 * The number after the highest invented id (`{idPrefix}{n}`) among the conversation's tool calls,
 * 0 when there is none. Gemini 2.x sends no call ids, so each turn would otherwise invent
 * `{idPrefix}0` again, and ids must stay unique in case the conversation moves to a provider that
 * requires it (Anthropic wants `tool_use` ids unique).
 */
export function nextInventedCallIndex(messages: readonly Message[], idPrefix: string): number {
  let next = 0;
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const block of message.content) {
      if (block.type !== 'toolCall' || !block.id.startsWith(idPrefix)) continue;
      const n = Number(block.id.slice(idPrefix.length));
      if (Number.isInteger(n) && n >= next) next = n + 1;
    }
  }
  return next;
}

/** Sets one `partialArgs` fragment (`$.a.b[0]`) in `args`; string fragments of one value are concatenated. */
function applyPartialArg(args: Record<string, unknown>, fragment: PartialArg): void {
  const path = (fragment.jsonPath ?? '$').replace(/^\$\.?/, '');
  const keys = path === '' ? [] : path.split(/\.|\[(\d+)\]/).filter((k): k is string => k !== undefined && k !== '');
  if (keys.length === 0) return;
  let target: Record<string, unknown> | unknown[] = args;
  keys.slice(0, -1).forEach((key, i) => {
    const record = target as Record<string, unknown>;
    const nextIsIndex = /^\d+$/.test(keys[i + 1]!);
    record[key] ??= nextIsIndex ? [] : {};
    target = record[key] as Record<string, unknown> | unknown[];
  });
  const last = keys[keys.length - 1]!;
  const record = target as Record<string, unknown>;
  if (fragment.stringValue !== undefined) {
    const current = record[last];
    record[last] = (typeof current === 'string' ? current : '') + fragment.stringValue;
  } else if (fragment.numberValue !== undefined) record[last] = fragment.numberValue;
  else if (fragment.boolValue !== undefined) record[last] = fragment.boolValue;
  else if ('nullValue' in fragment) record[last] = null;
}
