import { Observable, type SchedulerLike, asyncScheduler } from 'rxjs';
import type { Provider, ProviderOptions, StreamEvent, StreamRequest } from '../types/provider.js';
import type { StopReason } from '../types/message.js';
import { ProviderError } from '../types/errors.js';
import { Usage } from '../types/usage.js';
import { AssistantMessageBuilder } from '../sources/providers/message-builder.js';

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
      const steps = eventsOf(turn, request, options, () => `call_${++callIds}`, scheduler.now());
      return play(subscriber, steps, turn, scheduler);
    });
  Object.defineProperties(provider, {
    requests: { get: () => requests },
    remaining: { get: () => Math.max(0, script.length - next) },
  });
  return provider as ScriptedProvider;
}

type EventThunk = () => StreamEvent;

function eventsOf(turn: ScriptedTurn, request: StreamRequest, o: ScriptedProviderOptions, nextId: () => string, now: number): EventThunk[] {
  const b = new AssistantMessageBuilder(turn.model ?? o.model ?? request.model.id, o.provider ?? request.model.provider, now);
  const size = Math.max(1, turn.chunkSize ?? o.chunkSize ?? 4);
  const argChunks = Math.max(1, o.argChunks ?? 3);
  const out: EventThunk[] = [() => b.start()];
  if (turn.thinking !== undefined) {
    const t = typeof turn.thinking === 'string' ? { text: turn.thinking } : turn.thinking;
    for (const piece of chunks(t.text, size)) out.push(() => b.thinking(piece, 'scripted'));
    if (t.signature !== undefined) out[out.length - 1] = wrapAfter(out[out.length - 1]!, () => b.thinkingSignature(t.signature!, 'scripted'));
  }
  if (turn.text !== undefined) for (const piece of chunks(turn.text, size)) out.push(() => b.text(piece));
  for (const call of turn.toolCalls ?? []) {
    const id = call.id ?? nextId();
    out.push(() => b.toolCallStart(id, call.name, id));
    for (const piece of splitInto(JSON.stringify(call.arguments ?? {}), argChunks)) out.push(() => b.toolCallDelta(piece, id));
  }
  out.push(() => {
    b.setUsage(usageOf(turn, request));
    const stop = turn.stopReason ?? ((turn.toolCalls?.length ?? 0) > 0 ? 'toolUse' : 'stop');
    return b.finish(stop, turn.errorMessage);
  });
  return out;
}

function wrapAfter(thunk: EventThunk, after: () => void): EventThunk {
  return () => {
    const e = thunk();
    after();
    return e;
  };
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

function chunks(text: string, size: number): string[] {
  if (text.length === 0) return [];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function splitInto(text: string, parts: number): string[] {
  const size = Math.ceil(text.length / parts);
  return chunks(text, Math.max(1, size));
}

function play(
  subscriber: { next(e: StreamEvent): void; error(e: unknown): void; complete(): void; closed: boolean },
  steps: EventThunk[],
  turn: ScriptedTurn,
  scheduler: SchedulerLike,
): (() => void) | undefined {
  const failAt = turn.error ? Math.min(turn.errorAfter ?? 0, steps.length) : -1;
  const emit = (i: number): boolean => {
    if (i === failAt) {
      subscriber.error(turn.error);
      return false;
    }
    if (i >= steps.length) {
      subscriber.complete();
      return false;
    }
    try {
      subscriber.next(steps[i]!());
    } catch (e) {
      subscriber.error(e);
      return false;
    }
    if (i === steps.length - 1) {
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
