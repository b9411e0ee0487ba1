import { Observable, type SchedulerLike, asyncScheduler } from 'rxjs';
import type { Provider, ProviderOptions, StreamEvent, StreamRequest } from '../types/provider.js';
import type { StopReason } from '../types/message.js';
import { ProviderError } from '../types/errors.js';
import { Usage } from '../types/usage.js';
import { AssistantMessageBuilder } from '../providers/message-builder.js';

/** One scripted assistant turn. */
export interface ScriptedTurn {
  text?: string;
  thinking?: string | { text: string; signature?: string };
  toolCalls?: ReadonlyArray<{ name: string; arguments?: Record<string, unknown>; id?: string }>;
  usage?: Partial<Usage>;
  /** Default: `toolUse` when there are tool calls, else `stop`. */
  stopReason?: StopReason;
  errorMessage?: string;
  /** Fail the call with this error (a ProviderError is retried by the loop if retryable). */
  error?: Error;
  /** How many stream events to emit before `error` (default 0: fail before any output). */
  errorAfter?: number;
  /** Virtual ms before the first event. */
  delay?: number;
  /** Virtual ms between events. */
  chunkDelay?: number;
  /** Characters per text / thinking delta (default: the provider's). */
  chunkSize?: number;
  model?: string;
}

/** A turn, or a function of the request that makes one (to assert on what the loop sent, or to branch). */
export type ScriptStep = ScriptedTurn | ((request: StreamRequest, callIndex: number) => ScriptedTurn);

export interface ScriptedProviderOptions {
  /** Characters per text delta (default 4). */
  chunkSize?: number;
  /** Deltas each tool call's JSON arguments arrive in (default 3). */
  argChunks?: number;
  provider?: string;
  model?: string;
  /** Ignore the loop's scheduler and use this one for delays. */
  scheduler?: SchedulerLike;
}

export interface ScriptedProvider extends Provider {
  /** Every request received, in order. */
  readonly requests: StreamRequest[];
  /** Turns not yet played. */
  readonly remaining: number;
}

/**
 * A Provider that plays scripted assistant turns: text, thinking with signatures, tool calls
 * with streamed JSON arguments, usage, stop reasons, errors, and virtual-time delays. Chunking is
 * deterministic, so the same script yields the same events. It records the requests it gets, and
 * when the script runs out it fails with an error saying so.
 *
 * @example
 * const provider = scriptedProvider([
 *   { toolCalls: [{ name: 'add', arguments: { a: 2, b: 2 } }] },
 *   { text: 'It is 4.' },
 * ]);
 * agentLoop([userMessage('2+2?')], { systemPrompt: '', messages: [], tools: [add] }, { model: scriptedModel(), provider });
 */
export function scriptedProvider(script: readonly ScriptStep[], options: ScriptedProviderOptions = {}): ScriptedProvider {
  const requests: StreamRequest[] = [];
  let next = 0;
  let callIds = 0;
  const provider = (request: StreamRequest, providerOptions: ProviderOptions): Observable<StreamEvent> =>
    new Observable<StreamEvent>((subscriber) => {
      const callIndex = requests.length;
      requests.push(request);
      const step = script[next];
      if (step === undefined) {
        subscriber.error(
          ProviderError.other(
            `scriptedProvider: the script has ${script.length} turn(s) and all were played; call #${callIndex + 1} has no scripted answer ` +
              `(last message role: ${request.messages[request.messages.length - 1]?.role ?? 'none'}).`,
          ),
        );
        return undefined;
      }
      next++;
      const turn = typeof step === 'function' ? step(request, callIndex) : step;
      const scheduler = options.scheduler ?? providerOptions.scheduler ?? asyncScheduler;
      const playback = new TurnPlayback(turn, request, options, () => `call_${++callIds}`, scheduler.now());
      return play(subscriber, playback, turn, scheduler);
    });
  Object.defineProperties(provider, {
    requests: { get: () => requests },
    remaining: { get: () => Math.max(0, script.length - next) },
  });
  return provider as ScriptedProvider;
}

/**
 * One run of events of the same kind: `count` of them, the k-th made by `event(k)` when it is
 * played. A turn is a handful of segments, not one closure per delta: a scripted stream costs what
 * a real provider's parser does, and nothing of it outlives the event being delivered.
 */
interface Segment {
  count: number;
  event(k: number): StreamEvent;
}

/** The stream events of one scripted turn, made one at a time as they are played. */
class TurnPlayback {
  readonly length: number;
  private readonly segments: Segment[];
  private segment = 0;
  private offset = 0;

  constructor(turn: ScriptedTurn, request: StreamRequest, o: ScriptedProviderOptions, nextId: () => string, now: number) {
    const b = new AssistantMessageBuilder(turn.model ?? o.model ?? request.model.id, o.provider ?? request.model.provider, now);
    const size = Math.max(1, turn.chunkSize ?? o.chunkSize ?? 4);
    const argChunks = Math.max(1, o.argChunks ?? 3);
    const thinking = turn.thinking === undefined ? undefined : typeof turn.thinking === 'string' ? { text: turn.thinking } : turn.thinking;
    const thinkingChunks = thinking ? chunkCount(thinking.text, size) : 0;
    // A signature lands right after the last thinking delta (after `start` when there is none).
    const sign = (): void => {
      if (thinking?.signature !== undefined) b.thinkingSignature(thinking.signature, 'scripted');
    };
    this.segments = [
      one(() => {
        const e = b.start();
        if (thinkingChunks === 0) sign();
        return e;
      }),
    ];
    if (thinking && thinkingChunks > 0) {
      this.segments.push({
        count: thinkingChunks,
        event: (k) => {
          const e = b.thinking(thinking.text.slice(k * size, (k + 1) * size), 'scripted');
          if (k === thinkingChunks - 1) sign();
          return e;
        },
      });
    }
    const text = turn.text;
    if (text !== undefined) this.segments.push({ count: chunkCount(text, size), event: (k) => b.text(text.slice(k * size, (k + 1) * size)) });
    for (const call of turn.toolCalls ?? []) {
      const id = call.id ?? nextId();
      const json = JSON.stringify(call.arguments ?? {});
      const pieceSize = Math.max(1, Math.ceil(json.length / argChunks));
      this.segments.push(
        one(() => b.toolCallStart(id, call.name, id)),
        { count: chunkCount(json, pieceSize), event: (k) => b.toolCallDelta(json.slice(k * pieceSize, (k + 1) * pieceSize), id) },
      );
    }
    this.segments.push(
      one(() => {
        b.setUsage(usageOf(turn, request));
        const stop = turn.stopReason ?? ((turn.toolCalls?.length ?? 0) > 0 ? 'toolUse' : 'stop');
        return b.finish(stop, turn.errorMessage);
      }),
    );
    this.length = this.segments.reduce((n, segment) => n + segment.count, 0);
  }

  /** The next event of the turn (call it `length` times). */
  next(): StreamEvent {
    let segment = this.segments[this.segment]!;
    while (this.offset >= segment.count) {
      segment = this.segments[++this.segment]!;
      this.offset = 0;
    }
    return segment.event(this.offset++);
  }
}

function one(event: () => StreamEvent): Segment {
  return { count: 1, event };
}

function chunkCount(text: string, size: number): number {
  return Math.ceil(text.length / size);
}

/** Deterministic usage: the script's, else input ≈ request chars / 4 and output ≈ scripted chars / 4. */
function usageOf(turn: ScriptedTurn, request: StreamRequest): Usage {
  if (turn.usage) {
    const u = { ...Usage.empty(), ...turn.usage };
    if (!turn.usage.totalTokens) u.totalTokens = u.input + u.output + u.cacheRead + u.cacheWrite;
    return u;
  }
  const output = Math.ceil(((turn.text?.length ?? 0) + JSON.stringify(turn.toolCalls ?? []).length) / 4);
  const input = 10 + request.messages.length * 10;
  return { ...Usage.empty(), input, output, totalTokens: input + output };
}

function play(
  subscriber: { next(e: StreamEvent): void; error(e: unknown): void; complete(): void; closed: boolean },
  playback: TurnPlayback,
  turn: ScriptedTurn,
  scheduler: SchedulerLike,
): (() => void) | undefined {
  const failAt = turn.error ? Math.min(turn.errorAfter ?? 0, playback.length) : -1;
  const emit = (i: number): boolean => {
    if (i === failAt) {
      subscriber.error(turn.error);
      return false;
    }
    if (i >= playback.length) {
      subscriber.complete();
      return false;
    }
    try {
      subscriber.next(playback.next());
    } catch (e) {
      subscriber.error(e);
      return false;
    }
    if (i === playback.length - 1) {
      // The final `done` ends the stream at once, not one chunk gap later.
      subscriber.complete();
      return false;
    }
    return true;
  };
  if (!turn.delay && !turn.chunkDelay) {
    for (let i = 0; emit(i) && !subscriber.closed; i++);
    return undefined;
  }
  let i = 0;
  const action = scheduler.schedule(function tick(this: { schedule(state?: unknown, delay?: number): unknown }) {
    if (subscriber.closed) return;
    if (emit(i++)) this.schedule(undefined, turn.chunkDelay ?? 0);
  }, turn.delay ?? 0);
  return () => action.unsubscribe();
}

/** A ModelConfig for scripted runs. */
export function scriptedModel(id = 'scripted-model'): import('../types/provider.js').ModelConfig {
  return { id, name: 'Scripted', api: 'scripted', provider: 'scripted' };
}
