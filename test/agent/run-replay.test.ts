import { describe, expect, it } from 'vitest';
import { from, lastValueFrom, of, toArray } from 'rxjs';
import { RunReplay } from '../../src/agent/run-replay.js';
import { AssistantMessageBuilder } from '../../src/providers/message-builder.js';
import { BasicAgent, runToEnd, transcript, type AgentEvent, type StreamDelta, type Transcript } from '../../src/index.js';
import { scriptedModel, scriptedProvider } from '../../src/testing/index.js';
import type { Provider, StreamEvent } from '../../src/types/provider.js';
import type { AssistantMessage } from '../../src/types/message.js';
import { addTool, caughtUp, testScheduler } from './helpers.js';

/** A MessageUpdate of loop `loopId` from one builder event (its snapshot as the message). */
function update(loopId: string, e: StreamEvent, t: number, extra: Partial<StreamDelta> = {}): AgentEvent {
  const ev = e as Extract<StreamEvent, { type: 'textDelta' | 'thinkingDelta' | 'toolCallStart' | 'toolCallDelta' }>;
  const type = ev.type === 'textDelta' ? 'text' : ev.type === 'thinkingDelta' ? 'thinking' : 'toolCall';
  const delta = { type, contentIndex: ev.contentIndex, delta: 'delta' in ev ? ev.delta : '', ...extra } as StreamDelta;
  return { type: 'MessageUpdate', loopId, message: ev.partial, delta, timestamp: t };
}

/** The transcript of `events`, folded one by one. */
function fold(events: readonly AgentEvent[]): Transcript {
  let last: Transcript | undefined;
  from(events).pipe(transcript()).subscribe((v) => (last = v));
  return last!;
}

function replayOf(events: AgentEvent[]): AgentEvent[] {
  const subject = new RunReplay();
  for (const e of events) subject.next(e);
  subject.complete();
  const late: AgentEvent[] = [];
  let completed = false;
  subject.subscribe({ next: (e) => late.push(e), complete: () => (completed = true) });
  expect(completed).toBe(true);
  return late;
}

/** The MessageStart of a builder's message. */
function started(b: AssistantMessageBuilder, loopId: string, t: number): AgentEvent {
  const e = b.start();
  return { type: 'MessageStart', loopId, message: e.type === 'start' ? e.partial : (undefined as never), timestamp: t };
}

function ended(b: AssistantMessageBuilder, loopId: string, t: number, reason: 'stop' | 'toolUse' = 'stop'): AgentEvent {
  const e = b.finish(reason);
  return { type: 'MessageEnd', loopId, message: e.type === 'done' ? e.message : (undefined as never), timestamp: t };
}

/** The text each delta of `events` adds, per loop and block, in order: what a fold of them shows. */
function textsOf(events: readonly AgentEvent[]): Record<string, string> {
  const texts: Record<string, string> = {};
  for (const e of events) {
    if (e.type !== 'MessageUpdate') continue;
    const key = `${e.loopId}/${e.delta.contentIndex}/${e.delta.type}`;
    texts[key] = (texts[key] ?? '') + e.delta.delta;
  }
  return texts;
}

describe('RunReplay: a late subscriber catches up, consecutive deltas to one block as one update', () => {
  it('joins each run of deltas into one update (their texts, the last snapshot and time) and passes every other event as it was', () => {
    const b = new AssistantMessageBuilder('m', 'p', 1);
    const events: AgentEvent[] = [{ type: 'AgentStart', agentId: 'a', sessionId: 's', loopId: 'L', timestamp: 0 } as AgentEvent, started(b, 'L', 1)];
    let t = 2;
    for (const piece of ['Let ', 'me ', 'think']) events.push(update('L', b.thinking(piece), t++));
    b.thinkingSignature('sig'); // changes block 0 without an event of its own
    for (const piece of ['Hel', 'lo ', 'there']) events.push(update('L', b.text(piece), t++));
    b.setUsage({ input: 3, output: 5 }); // a new usage object: the run goes on, the last snapshot has it
    events.push(update('L', b.text('!'), t++));
    events.push(update('L', b.toolCallStart('c1', 'add'), t++, { id: 'c1', name: 'add' }));
    for (const piece of ['{"a":', '1}']) events.push(update('L', b.toolCallDelta(piece), t++));
    events.push(update('L', b.text(' more'), t++));
    events.push(update('L', b.text(' text', 'second'), t++)); // a new text block by key
    events.push(ended(b, 'L', t++, 'toolUse'));

    const late = replayOf(events);
    expect(late).toEqual(caughtUp(events));
    const updates = late.filter((e) => e.type === 'MessageUpdate');
    expect(updates.map((e) => [e.delta.type, e.delta.contentIndex, e.delta.delta, e.timestamp])).toEqual([
      ['thinking', 0, 'Let me think', 4],
      ['text', 1, 'Hello there!', 8],
      ['toolCall', 2, '{"a":1}', 11],
      ['text', 3, ' more', 12], // after the tool call: a new block
      ['text', 4, ' text', 13],
    ]);
    expect(updates[2]!.delta).toEqual({ type: 'toolCall', contentIndex: 2, delta: '{"a":1}', id: 'c1', name: 'add' });
    // The message of a joined update is the snapshot its last delta came with; what was not joined is the event itself.
    expect(updates[1]!.message).toBe((events[8] as Extract<AgentEvent, { type: 'MessageUpdate' }>).message);
    expect(updates[3]).toBe(events[12]);
    expect(late[0]).toBe(events[0]);
    expect(late.at(-1)).toBe(events.at(-1));
    expect(late[1]).not.toBe(events[1]); // MessageStart: its message copied as it was when emitted
    expect(late[1]).toEqual(events[1]);
    // Folded, the late subscriber's events give what the live ones gave, at the end and at the end of each event caught up on.
    expect(fold(late)).toEqual(fold(events));
    expect(textsOf(late)).toEqual(textsOf(events));
  });

  it('a subscriber that comes after any event catches up on what came before, then gets every event live', () => {
    // Text in two blocks (interleaved by key), thinking, a tool call between them, a usage change: the runs of
    // deltas start and end at many places, and a late subscriber may come inside any of them.
    const b = new AssistantMessageBuilder('m', 'p', 1);
    const events: AgentEvent[] = [started(b, 'L', 0)];
    let n = 3;
    const tick = (): number => Math.floor(n++ / 3);
    for (const piece of ['Once ', 'upon ', 'a ', 'time']) events.push(update('L', b.text(piece, 'a'), tick()));
    for (const piece of ['hm', 'mm']) events.push(update('L', b.thinking(piece), tick()));
    for (const piece of [', there', ' was']) events.push(update('L', b.text(piece, 'a'), tick()));
    events.push(update('L', b.text('other', 'b'), tick()));
    events.push(update('L', b.text(' block', 'b'), tick()));
    events.push(update('L', b.text(' again', 'a'), tick()));
    b.setUsage({ input: 1, output: 2 });
    for (const piece of [' and', ' on']) events.push(update('L', b.text(piece, 'a'), tick()));
    events.push(update('L', b.toolCallStart('c1', 'add'), tick(), { id: 'c1', name: 'add' }));
    events.push(update('L', b.toolCallDelta('{}'), tick()));
    for (const piece of [' the', ' end']) events.push(update('L', b.text(piece, 'a'), tick()));
    events.push(ended(b, 'L', tick(), 'toolUse'));
    const c = new AssistantMessageBuilder('m', 'p', 2);
    events.push(started(c, 'L', tick()));
    for (const piece of ['Later', ' on', ', more', ' text than before']) events.push(update('L', c.text(piece), tick()));

    for (let at = 0; at <= events.length; at++) {
      const subject = new RunReplay();
      const late: AgentEvent[] = [];
      events.forEach((e, i) => {
        if (i === at) subject.subscribe({ next: (x) => late.push(x) });
        subject.next(e);
      });
      if (at === events.length) subject.subscribe({ next: (x) => late.push(x) });
      subject.complete();
      const before = caughtUp(events.slice(0, at));
      expect(late, `subscribed before event ${at}`).toEqual([...before, ...events.slice(at)]);
      late.slice(before.length).forEach((e, i) => (e.type === 'MessageStart' ? expect(e).toEqual(events[at + i]) : expect(e).toBe(events[at + i]))); // live: the events themselves
      // Once the run has ended: what the first late subscriber caught up on, then the rest, joined.
      const after = [] as AgentEvent[];
      subject.subscribe({ next: (x) => after.push(x) });
      expect(after, `after the end, one came before event ${at}`).toEqual([...before, ...caughtUp(events.slice(at))]);
      expect(fold(after)).toEqual(fold(events));
    }
  });

  it('a delta that arrives while a late subscriber is caught up reaches it, once and in order', () => {
    const b = new AssistantMessageBuilder('m', 'p', 1);
    const events: AgentEvent[] = [started(b, 'L', 0)];
    for (const piece of ['a', 'b', 'c', 'd']) events.push(update('L', b.text(piece), 7));
    const subject = new RunReplay();
    for (const e of events.slice(0, 4)) subject.next(e);
    const late: AgentEvent[] = [];
    subject.subscribe({
      next: (x) => {
        late.push(x);
        if (late.length === 2) subject.next(events[4]!); // arrives while the replay delivers the run it had
      },
    });
    expect(late).toEqual([...caughtUp(events.slice(0, 4)), events[4]]);
    expect(textsOf(late)).toEqual({ 'L/0/text': 'abcd' });
  });

  it('keeps apart the deltas of another loop, and a delta with more fields whole', () => {
    const a = new AssistantMessageBuilder('m', 'p', 1);
    const events: AgentEvent[] = [
      { type: 'MessageStart', loopId: 'A', message: { ...a.partial, content: [] }, timestamp: 0 },
      update('A', a.text('one'), 1),
      update('A', a.text('two'), 2),
      update('B', a.text('three'), 3), // another loop's update: a run of its own
      update('B', a.text('four'), 4, { extra: true } as Partial<StreamDelta>), // kept whole, field included
      update('B', a.text('five'), 5), // does not join a delta with another field
      update('B', a.text('six'), 6),
    ];
    const late = replayOf(events);
    expect(late).toEqual(caughtUp(events));
    expect(late.map((e) => (e.type === 'MessageUpdate' ? `${e.loopId}:${e.delta.delta}` : e.type))).toEqual(['MessageStart', 'A:onetwo', 'B:three', 'B:four', 'B:fivesix']);
    expect(late[3]).toBe(events[4]);
  });

  it('a provider whose snapshot lags behind its deltas: each caught-up update has the deltas\' text', () => {
    const base = new AssistantMessageBuilder('m', 'p', 1).partial;
    const at = (text: string): AssistantMessage => ({ ...base, content: [{ type: 'text', text }] });
    const delta = (message: AssistantMessage, d: string, t: number): AgentEvent => ({ type: 'MessageUpdate', loopId: 'L', message, delta: { type: 'text', contentIndex: 0, delta: d }, timestamp: t });
    // 'cd' comes with a snapshot that lacks it: a run of its own, which 'xy' (its snapshot right again) cannot join.
    const events = [delta(at('ab'), 'ab', 1), delta(at('ab'), 'cd', 2), delta(at('abxy'), 'xy', 3), delta(at('abxyef'), 'ef', 4)];
    const late = replayOf(events);
    expect(late.map((e) => (e.type === 'MessageUpdate' ? e.delta.delta : ''))).toEqual(['ab', 'cd', 'xyef']);
    // Texts are trusted by their lengths: a snapshot with other characters of the right length is read as it is.
    expect(replayOf([delta(at('ab'), 'ab', 1), delta(at('abZZ'), 'cd', 2)]).map((e) => (e.type === 'MessageUpdate' ? e.delta.delta : ''))).toEqual(['abZZ']);
    expect(fold(late).streaming).toEqual(fold(events).streaming);
  });

  it('replays to a subscriber that comes mid-run, then delivers the live events, and ends as the run ended', () => {
    const b = new AssistantMessageBuilder('m', 'p', 1);
    const subject = new RunReplay();
    const first = [update('L', b.text('a'), 1), update('L', b.text('b'), 2)];
    first.forEach((e) => subject.next(e));
    const late: AgentEvent[] = [];
    let error: unknown;
    subject.subscribe({ next: (e) => late.push(e), error: (e) => (error = e) });
    const next = update('L', b.text('c'), 3);
    subject.next(next);
    subject.error(new Error('boom'));
    expect(late).toEqual([...caughtUp(first), next]);
    expect(late[1]).toBe(next);
    expect(error).toEqual(new Error('boom'));
    const after: AgentEvent[] = [];
    subject.subscribe({ next: (e) => after.push(e), error: (e) => (error = `again: ${(e as Error).message}`) });
    expect(after).toEqual([...caughtUp(first), next]);
    expect(error).toBe('again: boom');
  });

  it('a long run (hundreds of deltas: surrogate pairs, empty deltas, blocks interleaved) is caught up on from anywhere in it', () => {
    const events: AgentEvent[] = [];
    const pieces = ['héllo ', '😀', '', ' wörld', '𝄞𝄞', 'x'];
    let t = 1_764_000_000_000;
    for (let m = 0; m < 3; m++) {
      const b = new AssistantMessageBuilder('m', 'p', m);
      events.push(started(b, 'L', t));
      for (let i = 0; i < 150; i++) {
        const piece = pieces[(i * 7 + m) % pieces.length]!;
        const e = i % 40 < 30 ? b.text(piece, 'a') : i % 40 < 35 ? b.thinking(piece) : b.text(piece, 'b');
        events.push(update('L', e, (t += i % 3 === 0 ? 1 : 0)));
      }
      events.push(ended(b, 'L', ++t));
    }
    for (let at = 0; at <= events.length; at += 13) {
      const subject = new RunReplay();
      const late: AgentEvent[] = [];
      events.forEach((e, i) => {
        if (i === at) subject.subscribe({ next: (x) => late.push(x) });
        subject.next(e);
      });
      if (at >= events.length) subject.subscribe({ next: (x) => late.push(x) });
      expect(late).toEqual([...caughtUp(events.slice(0, at)), ...events.slice(at)]);
    }
    const late = replayOf(events);
    expect(late).toEqual(caughtUp(events));
    expect(late.length).toBeLessThan(events.length / 10); // 3 × (start, 12 runs of deltas, end)
    expect(textsOf(late)).toEqual(textsOf(events));
  });

  it('a subscriber that leaves while an event is delivered gets nothing more; the others get every event', () => {
    const b = new AssistantMessageBuilder('m', 'p', 1);
    const subject = new RunReplay();
    const events = [update('L', b.text('a'), 1), update('L', b.text('b'), 2), update('L', b.text('c'), 3)];
    const first: AgentEvent[] = [];
    const second: AgentEvent[] = [];
    const sub = subject.subscribe({ next: (e) => { first.push(e); sub?.unsubscribe(); } });
    subject.subscribe({ next: (e) => second.push(e) });
    events.forEach((e) => subject.next(e));
    expect(first).toEqual([events[0]]);
    expect(second).toEqual(events);
  });
});

describe('BasicAgent: a late subscriber catches up on the run', () => {
  const script = [
    { text: 'Some text streamed in many small deltas', thinking: 'first I think about it', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
    { text: 'and the answer, also in many deltas' },
  ];
  function agent() {
    let n = 0;
    const provider = scriptedProvider(script);
    const a = new BasicAgent({ model: scriptedModel(), provider, ids: () => `id${++n}`, retry: false });
    a.withTools(addTool);
    return a;
  }

  it('after the run ended: every event, each run of deltas joined; tool calls and thinking included', async () => {
    const run$ = agent().prompt('hi');
    const early: AgentEvent[] = [];
    run$.subscribe((e) => early.push(e));
    await runToEnd(run$);
    const late = await lastValueFrom(run$.pipe(toArray()));
    expect(early.filter((e) => e.type === 'MessageUpdate').length).toBeGreaterThan(20);
    expect(late).toEqual(caughtUp(early));
    expect(late.filter((e) => e.type === 'MessageUpdate')).toHaveLength(4); // thinking, text, tool arguments; text
    expect(fold(late)).toEqual(fold(early));
  });

  it('mid-run (virtual time): caught up, then live, and its transcript counts no delta twice', () => {
    testScheduler().run(({ cold, flush }) => {
      let n = 0;
      const provider = scriptedProvider([{ text: 'streamed slowly to a late page', thinking: 'hmm', chunkDelay: 5 }]);
      const a = new BasicAgent({ model: scriptedModel(), provider, ids: () => `id${++n}`, retry: false });
      const run$ = a.prompt('hi');
      const early: AgentEvent[] = [];
      const late: AgentEvent[] = [];
      let lastText: unknown;
      let mountedAt = 0;
      run$.subscribe((e) => early.push(e));
      cold('27ms a').subscribe(() => {
        expect(early.filter((e) => e.type === 'MessageUpdate').length).toBeGreaterThan(2);
        mountedAt = early.length;
        run$.subscribe((e) => late.push(e));
        run$.pipe(transcript()).subscribe((v) => {
          const last = v.messages.at(-1);
          if (last?.role === 'assistant') lastText = last.content.find((c) => c.type === 'text');
        });
      });
      flush();
      expect(late).toEqual([...caughtUp(early.slice(0, mountedAt)), ...early.slice(mountedAt)]);
      expect(fold(late)).toEqual(fold(early));
      expect(lastText).toEqual({ type: 'text', text: 'streamed slowly to a late page' });
    });
  });
  it('an event the agent cannot take in fails the run with the reason (nothing is lost on the way)', async () => {
    const empty: AssistantMessage = { role: 'assistant', content: [], stopReason: 'stop', model: 'm', provider: 'p', usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 }, timestamp: 1 };
    const answered: AssistantMessage = { ...empty, content: [{ type: 'text', text: 'x' }] };
    // A provider whose delta names block 3 of a message that has none: the transcript (watched) refuses it.
    const provider: Provider = () => of<StreamEvent[]>({ type: 'start', partial: empty }, { type: 'textDelta', contentIndex: 3, delta: 'x', partial: answered }, { type: 'done', message: answered });
    const a = new BasicAgent({ model: scriptedModel(), provider, retry: false });
    a.state$.subscribe();
    await expect(lastValueFrom(a.prompt('hi'))).rejects.toThrow(/contentIndex 3 is outside the message/);
    expect(a.isStreaming).toBe(false);
  });
});
