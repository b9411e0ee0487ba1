import { asyncScheduler, concat, concatMap, defer, from, map, of, throwError, timer, type Observable, type SchedulerLike } from 'rxjs';
import { AssistantMessageBuilder } from '../providers/message-builder.js';
import { AgentError, ProviderError } from '../types/errors.js';
import type { AgentMessage, AssistantMessage, Message } from '../types/message.js';
import type { Provider, ProviderOptions, StreamEvent, StreamRequest } from '../types/provider.js';
import type { LoopRecord, Session } from '../session/model.js';
import type { ContinuationKind } from '../types/config.js';
import { recordedTimings, type RecordedTiming } from './replay-timing.js';

export interface ReplayProviderOptions {
  /** Characters per text / thinking delta. Default 4 (the scripted provider's). */
  chunkSize?: number;
  /** Deltas each tool call's JSON arguments are split into. Default 3 (the scripted provider's). */
  argChunks?: number;
  /** Scheduler time before every event after `start`. Default 0: the whole message at once. */
  delayMs?: number;
  /** Clock for `delayMs`; else the loop's (ProviderOptions.scheduler); else asyncScheduler. */
  scheduler?: SchedulerLike;
  /** Check that each request ends with the message that preceded the answer in the recording. Default true. */
  checkRequests?: boolean;
  /**
   * `recorded` (default): each answer of a recorded Session comes when it came in the recording: its
   * first event at the recorded MessageStart's offset from its loop's start (a replayed loop starts at
   * its first request), and `done` at the recorded MessageEnd's; the deltas in between come right
   * after the first event. `immediate`:
   * the whole answer at once. A `delayMs` above 0 replaces both with its fixed spacing.
   */
  timing?: 'recorded' | 'immediate';
}

export interface ReplayProvider extends Provider {
  /** Every request received, in order, diverged ones included. */
  readonly requests: StreamRequest[];
  /** Recorded turns played so far. */
  readonly played: number;
  /** Recorded turns not yet played. */
  readonly remaining: number;
  /** Throws AgentError('ReplayDiverged') unless every recorded turn was played. */
  assertComplete(): void;
  /**
   * The ids the recording's `index`th loop ran with (loops in start order; default the first), for the
   * replay's context: `agentLoop(replay.prompts(), { ...context, ...replay.context() }, …)` then has
   * the recorded ids, whatever made them (a run recorded without `ids` or `sessionId` included).
   */
  context(index?: number): ReplayContext;
  /** The prompts the recording's `index`th loop started with, as recorded (timestamps included); none for a continuation. */
  prompts(index?: number): AgentMessage[];
}

/** A recorded loop's ids, as `AgentContext` takes them. */
export interface ReplayContext {
  agentId: string;
  sessionId: string;
  loopId: string;
  parentLoopId?: string;
  continuationKind?: ContinuationKind;
}

/** One recorded answer and what the request for it must end with. */
interface RecordedTurn {
  message: AssistantMessage;
  expected?: Message;
  loopId?: string;
  timing?: RecordedTiming;
  /** When the turn's loop started (the recording's clock): what its answers' times are measured from. */
  loopStartedAt?: number;
}

type EventThunk = () => StreamEvent;

/**
 * A Provider that plays back the assistant messages of a recorded session (its loops in start
 * order, each loop's turns in order), or of a plain message list. Each answer is re-streamed
 * through AssistantMessageBuilder with deterministic chunking, so re-running the same prompts
 * against it reproduces the recorded run event for event; the replayed message keeps the
 * recorded content, usage, stop reason, model and timestamp, and (see `timing`) each answer takes
 * as long as the model took, so under a TestScheduler started at the recording's start time the
 * replayed events carry the recorded timestamps, model latency included.
 *
 * Every request is checked against the recording: its last message must be the message that came
 * right before the answer in the recording (same role, content and tool call, timestamps aside).
 * A request that differs, or one past the end of the recording, fails with a non-retryable
 * `ProviderError('other')` whose `cause` is `AgentError('ReplayDiverged')`, saying at which turn
 * and how (expected vs got).
 *
 * Parallel branches are played in the order their loops started; a replay of them is
 * deterministic only if the branches ask in that order.
 *
 * @example
 * const session = await store.load(sessionId);
 * const provider = replayProvider(session);
 * await lastValueFrom(agentLoop([userMessage('What is 2+2?')], context, { model, provider }));
 * provider.assertComplete();
 * // a recording made in real time, without fixed ids: the same, with its ids and prompts
 * agentLoop(provider.prompts(), { ...context, ...provider.context() }, { model, provider, scheduler });
 */
export function replayProvider(recording: Session | readonly AgentMessage[], options: ReplayProviderOptions = {}): ReplayProvider {
  const turns = isMessageList(recording)
    ? turnsOf([{ messages: recording }])
    : turnsOf(
        recording.loops.map((loop) => {
          const messages = messagesOf(loop);
          return { ...loop, messages, timings: options.timing === 'immediate' ? undefined : recordedTimings(loop, messages), loopStartedAt: loop.startedAt };
        }),
      );
  const chunkSize = Math.max(1, options.chunkSize ?? 4);
  const argChunks = Math.max(1, options.argChunks ?? 3);
  const delayMs = options.delayMs ?? 0;
  const checkRequests = options.checkRequests ?? true;
  const requests: StreamRequest[] = [];
  let played = 0;
  // Where the loop being replayed started on the replay's clock: its answers come at their recorded times from it.
  let anchor: { loopId: string | undefined; origin: number } | undefined;

  const provider = (request: StreamRequest, providerOptions: ProviderOptions): Observable<StreamEvent> =>
    defer(() => {
      requests.push(request);
      const turn = turns[played];
      const problem = turn === undefined ? exhausted(played, turns.length, request) : checkRequests ? mismatch(turn, played, turns.length, request) : undefined;
      if (problem !== undefined) return throwError(() => divergedError(problem));
      played++;
      const steps = streamOf(turn!.message, chunkSize, argChunks);
      const scheduler = options.scheduler ?? providerOptions.scheduler ?? asyncScheduler;
      const timing = turn!.timing && delayMs <= 0 ? onReplayClock(turn!, scheduler.now()) : undefined;
      if (timing && timing.endAfter > 0) return withRecordedTiming(steps, timing, scheduler);
      if (delayMs <= 0) return from(steps).pipe(map((step) => step()));
      // Thunks run when emitted, so each event sees the shared partial message as it was then.
      return from(steps).pipe(concatMap((step, i) => (i === 0 ? of(step()) : timer(delayMs, scheduler).pipe(map(() => step())))));
    });

  /**
   * The waits for a recorded answer, from now: at the recorded times measured from its loop's start,
   * so that time the recording spent between answers (tools, hooks, its own set-up) does not shift
   * them; never before now. The loop's start on the replay's clock is its first request (what comes
   * before it takes no time in virtual time).
   */
  const onReplayClock = (turn: RecordedTurn, now: number): RecordedTiming => {
    const timing = turn.timing!;
    const start = turn.loopStartedAt;
    if (start === undefined) return timing;
    if (anchor === undefined || anchor.loopId !== turn.loopId) anchor = { loopId: turn.loopId, origin: now };
    const origin = anchor.origin;
    const after = (at: number): number => Math.max(0, origin + (at - start) - now);
    return { ...timing, startAfter: after(timing.startAt), endAfter: Math.max(after(timing.startAt), after(timing.endAt)) };
  };

  const loopAt = (index: number): LoopRecord => {
    const loop = isMessageList(recording) ? undefined : recording.loops[index];
    if (loop === undefined) {
      const what = isMessageList(recording) ? 'a message list has no recorded loops' : `the recording has ${recording.loops.length} loop(s)`;
      throw new AgentError('InvalidConfig', `replayProvider: no recorded loop ${index}: ${what}`);
    }
    return loop;
  };

  Object.defineProperties(provider, {
    context: {
      value: (index = 0): ReplayContext => {
        const loop = loopAt(index);
        return {
          agentId: loop.agentId, sessionId: loop.sessionId, loopId: loop.loopId,
          ...(loop.parentLoopId === undefined ? {} : { parentLoopId: loop.parentLoopId }),
          ...(loop.continuationKind === undefined ? {} : { continuationKind: loop.continuationKind }),
        };
      },
    },
    prompts: {
      value: (index = 0): AgentMessage[] => {
        const messages = messagesOf(loopAt(index));
        const first = messages.findIndex((m) => m.role === 'assistant');
        return (first < 0 ? messages : messages.slice(0, first)).map((m) => (m.role === 'extension' ? m : withoutTurnId(m)));
      },
    },
    requests: { get: () => requests },
    played: { get: () => played },
    remaining: { get: () => turns.length - played },
    assertComplete: {
      value: () => {
        if (played >= turns.length) return;
        const next = turns[played]!;
        throw new AgentError(
          'ReplayDiverged',
          `Replay incomplete: ${played} of ${turns.length} recorded turn(s) were requested; ` +
            `turn ${played + 1}${next.loopId ? ` (loop ${next.loopId})` : ''} never was.`,
        );
      },
    },
  });
  return provider as ReplayProvider;
}

/** `start` after `startAfter`, the deltas right after it, `done` at `endAfter` (all from the request). */
function withRecordedTiming(steps: readonly EventThunk[], timing: RecordedTiming, scheduler: SchedulerLike): Observable<StreamEvent> {
  const at = (ms: number, thunks: readonly EventThunk[]) => (ms > 0 ? timer(ms, scheduler).pipe(concatMap(() => from(thunks))) : from(thunks));
  const head = at(timing.startAfter, steps.slice(0, -1));
  const done = at(timing.endAfter - timing.startAfter, steps.slice(-1));
  return concat(head, done).pipe(map((step) => step()));
}

/** True for the error a replay fails with when the run left the recording. */
export function isReplayDiverged(e: unknown): boolean {
  if (e instanceof AgentError) return e.code === 'ReplayDiverged';
  return e instanceof ProviderError && e.cause instanceof AgentError && e.cause.code === 'ReplayDiverged';
}

/**
 * A loop's messages: AgentEnd's list, or for a loop that never ended (the run was torn down and
 * the recorder flushed) the messages its MessageEnd events carried.
 */
function messagesOf(loop: LoopRecord): readonly AgentMessage[] {
  if (loop.messages.length > 0 || (loop.status !== 'aborted' && loop.status !== 'running')) return loop.messages;
  const ended: AgentMessage[] = [];
  for (const e of loop.events) if (e.type === 'MessageEnd') ended.push(e.message);
  return ended;
}

function isMessageList(r: Session | readonly AgentMessage[]): r is readonly AgentMessage[] {
  return Array.isArray(r);
}

/**
 * The answers in order, each with the message before it: in its own loop, or for a loop that
 * opens with an answer (a continuation), the last message of the loop it continues.
 */
function turnsOf(
  loops: ReadonlyArray<{
    loopId?: string; parentLoopId?: string; messages: readonly AgentMessage[]; timings?: ReadonlyMap<AgentMessage, RecordedTiming>; loopStartedAt?: number;
  }>,
): RecordedTurn[] {
  const turns: RecordedTurn[] = [];
  const lastOfLoop = new Map<string, Message>();
  for (const loop of loops) {
    let previous = loop.parentLoopId === undefined ? undefined : lastOfLoop.get(loop.parentLoopId);
    for (const m of loop.messages) {
      if (m.role === 'extension') continue;
      const message = withoutTurnId(m);
      const timing = loop.timings?.get(m);
      if (message.role === 'assistant') {
        turns.push({
          message,
          ...(previous === undefined ? {} : { expected: previous }),
          ...(loop.loopId === undefined ? {} : { loopId: loop.loopId }),
          ...(timing === undefined ? {} : { timing }),
          ...(loop.loopStartedAt === undefined ? {} : { loopStartedAt: loop.loopStartedAt }),
        });
      }
      previous = message;
    }
    if (loop.loopId !== undefined && previous !== undefined) lastOfLoop.set(loop.loopId, previous);
  }
  return turns;
}

function withoutTurnId(m: Message & { turnId?: unknown }): Message {
  if (m.turnId === undefined) return m;
  const { turnId: _turnId, ...rest } = m;
  return rest as Message;
}

function exhausted(index: number, total: number, request: StreamRequest): string {
  return (
    `Replay diverged at turn ${index + 1}: the recording has only ${total} assistant message(s), ` +
    `got a request ending with ${show(lastOf(request))}.`
  );
}

function mismatch(turn: RecordedTurn, index: number, total: number, request: StreamRequest): string | undefined {
  if (turn.expected === undefined) return undefined;
  const got = lastOf(request);
  if (got !== undefined && identity(got) === identity(turn.expected)) return undefined;
  return (
    `Replay diverged at turn ${index + 1} of ${total}${turn.loopId ? ` (loop ${turn.loopId})` : ''}: ` +
    `the request's last message differs from the recording. Expected ${show(turn.expected)}, got ${show(got)}.`
  );
}

function divergedError(message: string): ProviderError {
  return ProviderError.other(message, { provider: 'replay', cause: new AgentError('ReplayDiverged', message) });
}

function lastOf(request: StreamRequest): Message | undefined {
  return request.messages[request.messages.length - 1];
}

/** What makes two requests "the same" here: role, tool call and content; never timestamps. */
function identity(m: Message): string {
  switch (m.role) {
    case 'user':
      return JSON.stringify(['user', m.content]);
    case 'toolResult':
      return JSON.stringify(['toolResult', m.toolCallId, m.toolName, m.isError, m.content]);
    case 'assistant':
      return JSON.stringify(['assistant', m.content]);
  }
}

const SHOW_LIMIT = 120;

/** `user "What is 2+2?"`, `toolResult add#call_1 "4"`, truncated. */
function show(m: Message | undefined): string {
  if (m === undefined) return 'no message';
  const body = m.content
    .map((c) => {
      switch (c.type) {
        case 'text':
          return c.text;
        case 'image':
          return `[image ${c.mimeType}]`;
        case 'thinking':
          return `[thinking]`;
        case 'toolCall':
          return `[toolCall ${c.name}#${c.id} ${JSON.stringify(c.arguments)}]`;
      }
    })
    .join(' ');
  const head = m.role === 'toolResult' ? `toolResult ${m.toolName}#${m.toolCallId}${m.isError ? ' (error)' : ''}` : m.role;
  return `${head} ${JSON.stringify(body.length > SHOW_LIMIT ? `${body.slice(0, SHOW_LIMIT)}…` : body)}`;
}

/** The events that stream `message` again, block by block in its content order. */
function streamOf(message: AssistantMessage, chunkSize: number, argChunks: number): EventThunk[] {
  const b = new AssistantMessageBuilder(message.model, message.provider, message.timestamp);
  const out: EventThunk[] = [() => b.start()];
  message.content.forEach((block, index) => {
    switch (block.type) {
      case 'text':
        for (const piece of chunks(block.text, chunkSize)) out.push(() => b.text(piece, index));
        return;
      case 'thinking': {
        if (block.redacted) {
          out.push(() => b.redactedThinking(block.signature ?? '', index));
          return;
        }
        for (const piece of chunks(block.thinking, chunkSize)) out.push(() => b.thinking(piece, index));
        const signature = block.signature;
        if (signature !== undefined) {
          const last = out[out.length - 1]!;
          out[out.length - 1] = () => {
            const event = last();
            b.thinkingSignature(signature, index);
            return event;
          };
        }
        return;
      }
      case 'toolCall': {
        const json = JSON.stringify(block.arguments);
        out.push(() => b.toolCallStart(block.id, block.name, index));
        for (const piece of chunks(json, Math.ceil(json.length / argChunks))) out.push(() => b.toolCallDelta(piece, index));
        return;
      }
    }
  });
  out.push(() => {
    b.setUsage(message.usage);
    b.partial.usage.totalTokens = message.usage.totalTokens; // as recorded, even a provider's 0
    return b.finish(message.stopReason, message.errorMessage);
  });
  return out;
}

/** Fixed-size pieces; an empty text is one empty piece, so the block still exists in the replay. */
function chunks(text: string, size: number): string[] {
  if (text.length === 0) return [''];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
