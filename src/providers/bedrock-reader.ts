import { Observable } from 'rxjs';
import type { OperatorFunction } from 'rxjs';
import type { StreamEvent } from '../types/provider.js';
import type { StopReason } from '../types/message.js';
import { ProviderError } from '../types/errors.js';
import { classifyStreamError, excerpt, redactSecrets } from '../sources/http/index.js';
import { DEFAULT_MAX_EVENT_BYTES, eventTooLarge } from '../sources/http/bounded-decode.js';
import { importOptionalPeer } from '../util/optional-peer.js';
import type { AssistantMessageBuilder } from './message-builder.js';
import type { WireParser } from './provider-kit.js';

/*
 * The stream reader of Amazon Bedrock ConverseStream: an AWS event stream (binary frames,
 * `application/vnd.amazon.eventstream`) decoded and checksummed by @smithy/eventstream-codec, then
 * parsed into StreamEvents.
 */

/** One decoded event-stream message: its type headers and JSON payload. */
export interface BedrockStreamMessage {
  /** `:message-type`: `event`, `exception` or `error`. */
  messageType: string;
  /** `:event-type` or `:exception-type`. */
  type: string;
  payload: Record<string, unknown>;
  /** `:error-code` / `:error-message` of `error` messages. */
  errorCode?: string;
  errorMessage?: string;
}

/** What @smithy/eventstream-codec gives us; loaded lazily so `import 'phi-rx'` stays light. */
export interface EventStreamDecoder {
  decode(frame: Uint8Array): { headers: Record<string, { type: string; value: unknown }>; body: Uint8Array };
}

let decoderPromise: Promise<EventStreamDecoder> | undefined;

/** The event-stream codec, imported on first use. */
export function loadEventStreamDecoder(): Promise<EventStreamDecoder> {
  decoderPromise ??= (async () => {
    const [{ EventStreamCodec }, { toUtf8, fromUtf8 }] = await Promise.all([
      importOptionalPeer<typeof import('@smithy/eventstream-codec')>('@smithy/eventstream-codec', 'The Bedrock provider'),
      importOptionalPeer<typeof import('@smithy/util-utf8')>('@smithy/util-utf8', 'The Bedrock provider'),
    ]);
    return new EventStreamCodec(toUtf8, fromUtf8) as EventStreamDecoder;
  })();
  return decoderPromise;
}

/**
 * Cuts a byte stream into whole event-stream frames (each starts with its total length, a
 * big-endian uint32) and decodes each with the codec, which checks both CRCs and parses the
 * headers. A body that ends inside a frame fails with a retryable network error; a frame whose
 * prelude claims more than `maxFrameBytes` fails at once with a non-retryable ProviderError.
 *
 * ```
 * bytes:    --[frame1 + half of frame2]--[rest of frame2]--|
 * messages: --m1---------------------------m2---------------|
 * ```
 */
export function decodeEventStream(
  decoder: EventStreamDecoder,
  provider: string,
  secrets: readonly string[] = [],
  maxFrameBytes: number = DEFAULT_MAX_EVENT_BYTES,
): OperatorFunction<Uint8Array, BedrockStreamMessage> {
  return (source) =>
    new Observable<BedrockStreamMessage>((subscriber) => {
      // The chunks not yet cut into frames, joined only when a frame is whole: a large frame costs one copy.
      const pending: Uint8Array[] = [];
      let buffered = 0;
      const take = (count: number): Uint8Array => {
        const out = new Uint8Array(count);
        for (let at = 0; at < count; ) {
          const head = pending[0]!;
          const n = Math.min(head.length, count - at);
          out.set(head.subarray(0, n), at);
          at += n;
          if (n === head.length) pending.shift();
          else pending[0] = head.subarray(n);
        }
        buffered -= count;
        return out;
      };
      const frameLength = (): number => {
        if (pending[0]!.length < 4) {
          pending.unshift(take(4)); // a prelude cut across chunks: its 4 bytes joined
          buffered += 4;
        }
        const head = pending[0]!;
        return new DataView(head.buffer, head.byteOffset, 4).getUint32(0, false);
      };
      const drain = (): void => {
        while (buffered >= 4) {
          const total = frameLength();
          if (total < 16) throw ProviderError.other(`${provider} sent a malformed event-stream frame (length ${total})`, { provider });
          // Refused from its prelude, before the rest of it is buffered.
          if (total > maxFrameBytes) throw eventTooLarge(provider, maxFrameBytes);
          if (buffered < total) return;
          subscriber.next(decodeFrame(decoder, take(total), provider, secrets));
        }
      };
      return source.subscribe({
        next: (chunk) => {
          pending.push(chunk);
          buffered += chunk.length;
          try {
            drain();
          } catch (error) {
            subscriber.error(error);
          }
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => {
          if (buffered > 0) {
            subscriber.error(ProviderError.network(`${provider} stream ended inside an event-stream frame (${buffered} bytes left)`, { provider }));
            return;
          }
          subscriber.complete();
        },
      });
    });
}

function decodeFrame(decoder: EventStreamDecoder, frame: Uint8Array, provider: string, secrets: readonly string[]): BedrockStreamMessage {
  let decoded: ReturnType<EventStreamDecoder['decode']>;
  try {
    decoded = decoder.decode(frame);
  } catch (e) {
    throw ProviderError.other(`${provider} sent a corrupt event-stream frame: ${(e as Error).message}`, { provider });
  }
  const header = (name: string): string | undefined => {
    const value = decoded.headers[name]?.value;
    return typeof value === 'string' ? value : undefined;
  };
  const text = new TextDecoder().decode(decoded.body);
  let payload: Record<string, unknown> = {};
  if (text.trim() !== '') {
    try {
      payload = JSON.parse(text) as Record<string, unknown>;
    } catch (e) {
      throw ProviderError.other(
        redactSecrets(`${provider} sent a malformed JSON event payload (${(e as Error).message}): ${excerpt(text)}`, secrets),
        { provider },
      );
    }
  }
  const messageType = header(':message-type') ?? 'event';
  const message: BedrockStreamMessage = {
    messageType,
    type: header(messageType === 'exception' ? ':exception-type' : ':event-type') ?? '',
    payload,
  };
  const errorCode = header(':error-code');
  const errorMessage = header(':error-message');
  if (errorCode !== undefined) message.errorCode = errorCode;
  if (errorMessage !== undefined) message.errorMessage = errorMessage;
  return message;
}

/** HTTP statuses the ConverseStream exceptions stand for, so they classify like HTTP errors. */
const EXCEPTION_STATUS: Record<string, number> = {
  throttlingException: 429,
  serviceUnavailableException: 503,
  internalServerException: 500,
  modelStreamErrorException: 500,
  modelTimeoutException: 408,
  validationException: 400,
  accessDeniedException: 403,
  resourceNotFoundException: 404,
};

interface ContentBlockStart {
  contentBlockIndex?: number;
  start?: { toolUse?: { toolUseId?: string; name?: string; type?: string }; toolResult?: unknown };
}

interface ContentBlockDelta {
  contentBlockIndex?: number;
  delta?: {
    text?: string;
    toolUse?: { input?: string };
    reasoningContent?: { text?: string; signature?: string; redactedContent?: string };
  };
}

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'toolUse',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  guardrail_intervened: 'guardRail',
  content_filtered: 'error',
};

/**
 * Parses ConverseStream events. Blocks are keyed by `contentBlockIndex`. Server-side tool blocks
 * (`type: "server_tool_use"` and their results, e.g. Nova's code interpreter) ran at AWS; they
 * are not tool calls for the loop to run and are left out of the message.
 */
export class BedrockStreamParser implements WireParser<BedrockStreamMessage> {
  private stopReason: string | undefined;
  private readonly serverBlocks = new Set<number>();
  /** Blocks of the structured-output tool, whose arguments are reported as text. */
  private readonly outputBlocks = new Set<number>();

  constructor(
    private readonly builder: AssistantMessageBuilder,
    private readonly provider: string,
    private readonly secrets: readonly string[] = [],
    /** The output tool of a structured-output request (see output-tool.ts). */
    private readonly outputTool?: string,
  ) {}

  push(message: BedrockStreamMessage, emit: (event: StreamEvent) => void): void {
    if (message.messageType === 'exception') throw this.exception(message.type, message.payload['message']);
    if (message.messageType === 'error') throw this.exception(message.errorCode ?? 'error', message.errorMessage);
    switch (message.type) {
      case 'contentBlockStart':
        return this.blockStart(message.payload as ContentBlockStart, emit);
      case 'contentBlockDelta':
        return this.blockDelta(message.payload as ContentBlockDelta, emit);
      case 'messageStop':
        this.stopReason = typeof message.payload['stopReason'] === 'string' ? message.payload['stopReason'] : 'end_turn';
        return;
      case 'metadata':
        return this.usage(message.payload['usage']);
      default:
        // messageStart, contentBlockStop, ...: nothing to build. Unknown events are ignored on purpose:
        // AWS adds event types without notice.
        return;
    }
  }

  end(emit: (event: StreamEvent) => void): void {
    if (this.stopReason === undefined) throw ProviderError.network(`${this.provider} stream ended before messageStop`, { provider: this.provider });
    let reason = STOP_REASONS[this.stopReason] ?? (this.builder.hasToolCalls() ? 'toolUse' : 'stop');
    // A call of the output tool alone is the answer, not a tool call to run.
    if (this.outputTool !== undefined && reason === 'toolUse' && !this.builder.hasToolCalls()) reason = 'stop';
    const errorMessage = reason === 'error' || reason === 'guardRail' ? `${this.provider} stopped: ${this.stopReason}` : undefined;
    emit(this.builder.finish(reason, errorMessage));
  }

  private blockStart(event: ContentBlockStart, emit: (event: StreamEvent) => void): void {
    const index = event.contentBlockIndex ?? 0;
    const toolUse = event.start?.toolUse;
    if (event.start?.toolResult !== undefined || toolUse?.type === 'server_tool_use') {
      this.serverBlocks.add(index);
      return;
    }
    if (toolUse && this.outputTool !== undefined && toolUse.name === this.outputTool) this.outputBlocks.add(index);
    else if (toolUse) emit(this.builder.toolCallStart(toolUse.toolUseId ?? `tooluse_${index}`, toolUse.name ?? '', index));
  }

  private blockDelta(event: ContentBlockDelta, emit: (event: StreamEvent) => void): void {
    const index = event.contentBlockIndex ?? 0;
    const delta = event.delta;
    if (!delta || this.serverBlocks.has(index)) return;
    const b = this.builder;
    if (typeof delta.text === 'string') {
      if (delta.text !== '') emit(b.text(delta.text, index));
    } else if (delta.toolUse) {
      if (typeof delta.toolUse.input !== 'string') return;
      if (this.outputBlocks.has(index)) {
        if (delta.toolUse.input !== '') emit(b.text(delta.toolUse.input, index));
      } else emit(b.toolCallDelta(delta.toolUse.input, index));
    } else if (delta.reasoningContent) {
      const r = delta.reasoningContent;
      if (typeof r.text === 'string' && r.text !== '') emit(b.thinking(r.text, index));
      if (typeof r.signature === 'string') b.thinkingSignature(r.signature, index, true);
      if (typeof r.redactedContent === 'string') emit(b.redactedThinking(r.redactedContent, index));
    }
  }

  private usage(value: unknown): void {
    if (value === null || typeof value !== 'object') return;
    const u = value as { inputTokens?: number; outputTokens?: number; totalTokens?: number; cacheReadInputTokens?: number; cacheWriteInputTokens?: number };
    this.builder.setUsage({
      input: u.inputTokens ?? 0,
      output: u.outputTokens ?? 0,
      cacheRead: u.cacheReadInputTokens ?? 0,
      cacheWrite: u.cacheWriteInputTokens ?? 0,
      totalTokens: u.totalTokens ?? 0,
    });
  }

  private exception(type: string, message: unknown): ProviderError {
    return classifyStreamError({
      message: typeof message === 'string' ? message : '',
      type,
      status: EXCEPTION_STATUS[type],
      provider: this.provider,
      secrets: this.secrets,
    });
  }
}
