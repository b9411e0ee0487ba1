import { describe, expect, it } from 'vitest';
import { firstValueFrom, lastValueFrom, map, toArray, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { isReplayDiverged, replayProvider } from '../../src/testing/replay-provider.js';
import { SessionRecorder } from '../../src/session/index.js';
import { DEFAULT_CACHE_CONFIG } from '../../src/types/config.js';
import { AgentError, ProviderError } from '../../src/types/errors.js';
import type { AgentMessage, AssistantMessage, Message, ToolResultMessage } from '../../src/types/message.js';
import type { StreamEvent, StreamRequest } from '../../src/types/provider.js';
import { usage } from '../session/events.js';

const u = (text: string, timestamp = 1): Message => ({ role: 'user', content: [{ type: 'text', text }], timestamp });
const toolResult = (toolCallId: string, text: string, timestamp = 3): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId,
  toolName: 'add',
  content: [{ type: 'text', text }],
  isError: false,
  timestamp,
});
const a = (content: AssistantMessage['content'], extra: Partial<AssistantMessage> = {}): AssistantMessage => ({
  role: 'assistant',
  content,
  stopReason: 'stop',
  model: 'model-x',
  provider: 'prov',
  usage: usage(10, 5),
  timestamp: 2,
  ...extra,
});

const call = a([{ type: 'toolCall', id: 'call_1', name: 'add', arguments: { a: 2, b: 2 } }], { stopReason: 'toolUse', timestamp: 2 });
const answer = a([{ type: 'text', text: 'It is 4.' }], { timestamp: 4, usage: usage(20, 3) });
const followUp = a([{ type: 'text', text: 'Bye.' }], { timestamp: 8 });
const loop1: AgentMessage[] = [u('What is 2+2?'), { ...call, turnId: { loopId: 's.1', turnIndex: 0 } }, toolResult('call_1', '4'), answer];
const loop2: AgentMessage[] = [{ role: 'extension', kind: 'note', data: null }, u('Thanks', 7), followUp];

/** A session recorded from hand-made events: loop s.2 continues s.1. */
function recordedSession() {
  const recorder = new SessionRecorder();
  const loops: Array<[string, AgentMessage[], number, string?]> = [['s.1', loop1, 0], ['s.2', loop2, 10, 's.1']];
  for (const [loopId, messages, t, parentLoopId] of loops) {
    recorder.onEvent({ type: 'AgentStart', agentId: 'ag', sessionId: 's', loopId, ...(parentLoopId ? { parentLoopId } : {}), timestamp: t });
    recorder.onEvent({ type: 'AgentEnd', loopId, messages, usage: usage(1, 1), stopReason: 'stop', timestamp: t + 5 });
  }
  return recorder.getSession('s')!;
}

const request = (messages: Message[]): StreamRequest => ({
  model: { id: 'model-x', api: 'scripted', provider: 'prov' },
  systemPrompt: '',
  messages,
  tools: [],
  thinkingLevel: 'off',
  cacheConfig: DEFAULT_CACHE_CONFIG,
});

/** Each event with the partial message's state at the moment it was emitted. */
const snapshots = (events$: Observable<StreamEvent>): Promise<StreamEvent[]> =>
  lastValueFrom(
    events$.pipe(
      map((e): StreamEvent => (e.type === 'done' ? { type: 'done', message: structuredClone(e.message) } : { ...e, partial: structuredClone(e.partial) })),
      toArray(),
    ),
  );

const doneOf = async (events$: Observable<StreamEvent>): Promise<AssistantMessage> => {
  const events = await lastValueFrom(events$.pipe(toArray()));
  const done = events.at(-1)!;
  if (done.type !== 'done') throw new Error('no done event');
  return done.message;
};

describe('replayProvider', () => {
  it('plays the recorded answers in loop order, turn by turn, as recorded', async () => {
    const provider = replayProvider(recordedSession());
    expect(await doneOf(provider(request([u('What is 2+2?')]), {}))).toEqual(call);
    expect(await doneOf(provider(request([u('What is 2+2?'), call, toolResult('call_1', '4')]), {}))).toEqual(answer);
    expect(await doneOf(provider(request([u('What is 2+2?'), call, toolResult('call_1', '4'), answer, u('Thanks')]), {}))).toEqual(followUp);
    expect(provider.played).toBe(3);
    expect(provider.remaining).toBe(0);
    expect(() => provider.assertComplete()).not.toThrow();
  });

  it('re-streams text as fixed-size deltas through the shared partial message', async () => {
    const provider = replayProvider([u('hi'), answer], { chunkSize: 3 });
    const events = await snapshots(provider(request([u('hi')]), {}));
    expect(events.map((e) => (e.type === 'textDelta' ? [e.delta, (e.partial.content[0] as { text: string }).text] : e.type))).toEqual([
      'start',
      ['It ', 'It '],
      ['is ', 'It is '],
      ['4.', 'It is 4.'],
      'done',
    ]);
  });

  it('re-streams thinking with its signature, redacted thinking, tool calls and empty text blocks', async () => {
    const rich = a(
      [
        { type: 'thinking', thinking: 'Let me add.', signature: 'sig==' },
        { type: 'thinking', thinking: '', redacted: true, signature: 'opaque' },
        { type: 'text', text: '' },
        { type: 'toolCall', id: 'call_9', name: 'add', arguments: { a: 1, nested: { list: [1, 2] } } },
      ],
      { stopReason: 'toolUse', errorMessage: 'kept too', usage: { ...usage(3, 4), totalTokens: 0 } },
    );
    const provider = replayProvider([u('q'), rich], { chunkSize: 5 });
    const events = await lastValueFrom(provider(request([u('q')]), {}).pipe(toArray()));
    expect(events.map((e) => e.type)).toEqual([
      'start', 'thinkingDelta', 'thinkingDelta', 'thinkingDelta', 'thinkingDelta', 'textDelta',
      'toolCallStart', 'toolCallDelta', 'toolCallDelta', 'toolCallDelta', 'done',
    ]);
    const done = events.at(-1) as { message: AssistantMessage };
    expect(done.message).toEqual(rich);
  });

  it('is deterministic: the same recording streams the same events every time', async () => {
    const run = () => snapshots(replayProvider(recordedSession())(request([u('What is 2+2?')]), {}));
    expect(JSON.stringify(await run())).toEqual(JSON.stringify(await run()));
  });

  it('is cold: nothing is consumed until subscribed', async () => {
    const provider = replayProvider(recordedSession());
    const stream = provider(request([u('What is 2+2?')]), {});
    expect(provider.played).toBe(0);
    expect(provider.requests).toEqual([]);
    await lastValueFrom(stream);
    expect(provider.played).toBe(1);
  });

  it('ignores timestamps and routing ids when comparing requests with the recording', async () => {
    const provider = replayProvider(recordedSession());
    await lastValueFrom(provider(request([u('What is 2+2?', 999)]), {}));
    await expect(doneOf(provider(request([u('x'), call, toolResult('call_1', '4', 12345)]), {}))).resolves.toEqual(answer);
  });

  it('fails a request that differs from the recording, saying at which turn and how', async () => {
    const provider = replayProvider(recordedSession());
    await lastValueFrom(provider(request([u('What is 2+2?')]), {}));
    const error = await firstValueFrom(provider(request([u('What is 2+2?'), call, toolResult('call_1', '5')]), {})).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: 'other', retryable: false, provider: 'replay' });
    expect((error as Error).message).toBe(
      'Replay diverged at turn 2 of 3 (loop s.1): the request\'s last message differs from the recording. ' +
        'Expected toolResult add#call_1 "4", got toolResult add#call_1 "5".',
    );
    expect((error as Error).cause).toBeInstanceOf(AgentError);
    expect(((error as Error).cause as AgentError).code).toBe('ReplayDiverged');
    expect(isReplayDiverged(error)).toBe(true);
    expect(provider.played).toBe(1);
  });

  it('checks the first answer of a continuation against the loop it continues', async () => {
    const provider = replayProvider(recordedSession(), {});
    await lastValueFrom(provider(request([u('What is 2+2?')]), {}));
    await lastValueFrom(provider(request([u('What is 2+2?'), call, toolResult('call_1', '4')]), {}));
    const error = await firstValueFrom(provider(request([u('Thanks?')]), {})).catch((e: unknown) => e);
    expect((error as Error).message).toContain('turn 3 of 3 (loop s.2)');
    expect((error as Error).message).toContain('Expected user "Thanks", got user "Thanks?"');
  });

  it('fails a request past the end of the recording', async () => {
    const provider = replayProvider([u('hi'), answer]);
    await lastValueFrom(provider(request([u('hi')]), {}));
    const error = await firstValueFrom(provider(request([u('hi'), answer, u('more')]), {})).catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      'Replay diverged at turn 2: the recording has only 1 assistant message(s), got a request ending with user "more".',
    );
    expect(isReplayDiverged(error)).toBe(true);
  });

  it('truncates long contents in the error', async () => {
    const long = 'x'.repeat(500);
    const provider = replayProvider([u(long), answer]);
    const error = await firstValueFrom(provider(request([u(`${long}y`)]), {})).catch((e: unknown) => e);
    const message = (error as Error).message;
    expect(message).toContain(`Expected user "${'x'.repeat(120)}…", got user "${'x'.repeat(120)}…"`);
    expect(message.length).toBeLessThan(400);
  });

  it('can skip the request checks', async () => {
    const provider = replayProvider(recordedSession(), { checkRequests: false });
    expect(await doneOf(provider(request([u('anything')]), {}))).toEqual(call);
  });

  it('assertComplete names the first turn never requested', async () => {
    const provider = replayProvider(recordedSession());
    await lastValueFrom(provider(request([u('What is 2+2?')]), {}));
    expect(() => provider.assertComplete()).toThrow('Replay incomplete: 1 of 3 recorded turn(s) were requested; turn 2 (loop s.1) never was.');
    expect(isReplayDiverged((() => { try { provider.assertComplete(); } catch (e) { return e; } })())).toBe(true);
  });

  it('spaces the deltas on the given scheduler', () => {
    const testScheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    testScheduler.run(({ expectObservable }) => {
      const provider = replayProvider([u('hi'), a([{ type: 'text', text: 'abcdefgh' }])], { chunkSize: 4, delayMs: 10 });
      const types = provider(request([u('hi')]), { scheduler: testScheduler }).pipe(map((e) => (e.type === 'textDelta' ? e.delta : e.type)));
      expectObservable(types).toBe('s 9ms a 9ms b 9ms (d|)', { s: 'start', a: 'abcd', b: 'efgh', d: 'done' });
    });
  });

  it('prefers its own scheduler option over the loop\'s', () => {
    const testScheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    testScheduler.run(({ expectObservable }) => {
      const provider = replayProvider([u('hi'), a([{ type: 'text', text: 'ab' }])], { delayMs: 5, scheduler: testScheduler });
      const types = provider(request([u('hi')]), {}).pipe(map((e) => e.type));
      expectObservable(types).toBe('s 4ms t 4ms (d|)', { s: 'start', t: 'textDelta', d: 'done' });
    });
  });
});

describe('replayProvider on a run that never ended', () => {
  it('plays the answers the MessageEnd events of an aborted loop carried', async () => {
    const recorder = new SessionRecorder();
    const prompt = u('What is 2+2?');
    recorder.onEvent({ type: 'AgentStart', agentId: 'ag', sessionId: 's', loopId: 's.1', timestamp: 0 });
    recorder.onEvent({ type: 'MessageEnd', loopId: 's.1', message: prompt, timestamp: 1 });
    recorder.onEvent({ type: 'MessageEnd', loopId: 's.1', message: call, timestamp: 2 });
    recorder.flush(); // torn down before AgentEnd
    const session = recorder.getSession('s')!;
    expect(session.loops[0]!.status).toBe('aborted');
    const provider = replayProvider(session);
    expect(await doneOf(provider(request([prompt]), {}))).toEqual(call);
    expect(provider.remaining).toBe(0);
  });
});
