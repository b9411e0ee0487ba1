import { describe, expect, it } from 'vitest';
import { lastValueFrom, of, toArray } from 'rxjs';
import { RunReplay } from '../../src/agent/run-replay.js';
import { AssistantMessageBuilder } from '../../src/sources/providers/message-builder.js';
import { BasicAgent, runToEnd, transcript, type AgentEvent, type StreamDelta } from '../../src/index.js';
import { scriptedModel, scriptedProvider } from '../../src/testing/index.js';
import type { Provider, StreamEvent } from '../../src/types/provider.js';
import type { AssistantMessage } from '../../src/types/message.js';
import { addTool, testScheduler } from './helpers.js';

/** A MessageUpdate of loop `loopId` from one builder event (its snapshot as the message). */
function update(loopId: string, e: StreamEvent, t: number, extra: Partial<StreamDelta> = {}): AgentEvent {
  const ev = e as Extract<StreamEvent, { type: 'textDelta' | 'thinkingDelta' | 'toolCallStart' | 'toolCallDelta' }>;
  const type = ev.type === 'textDelta' ? 'text' : ev.type === 'thinkingDelta' ? 'thinking' : 'toolCall';
  const delta = { type, contentIndex: ev.contentIndex, delta: 'delta' in ev ? ev.delta : '', ...extra } as StreamDelta;
  return { type: 'MessageUpdate', loopId, message: ev.partial, delta, timestamp: t };
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

describe('RunReplay: a late subscriber gets every event, updates rebuilt from their deltas', () => {
  it('rebuilds text, thinking and tool-argument updates equal to the ones emitted, and keeps any other update as it was', () => {
    const b = new AssistantMessageBuilder('m', 'p', 1);
    const start = b.start();
    const events: AgentEvent[] = [
      { type: 'AgentStart', agentId: 'a', sessionId: 's', loopId: 'L', timestamp: 0 } as AgentEvent,
      { type: 'MessageStart', loopId: 'L', message: start.type === 'start' ? start.partial : (undefined as never), timestamp: 1 },
    ];
    let t = 2;
    for (const piece of ['Let ', 'me ', 'think']) events.push(update('L', b.thinking(piece), t++));
    b.thinkingSignature('sig'); // changes block 0 without an event of its own: the next snapshot is not derivable
    for (const piece of ['Hel', 'lo ', 'there']) events.push(update('L', b.text(piece), t++));
    b.setUsage({ input: 3, output: 5 }); // a new usage object: not derivable
    events.push(update('L', b.text('!'), t++));
    events.push(update('L', b.toolCallStart('c1', 'add'), t++, { id: 'c1', name: 'add' }));
    for (const piece of ['{"a":', '1}']) events.push(update('L', b.toolCallDelta(piece), t++));
    events.push(update('L', b.text(' more'), t++));
    events.push(update('L', b.text(' text', 'second'), t++)); // a new text block by key
    const done = b.finish('toolUse');
    events.push({ type: 'MessageEnd', loopId: 'L', message: done.type === 'done' ? done.message : (undefined as never), timestamp: t++ });

    const late = replayOf(events);
    expect(late).toEqual(events);
    expect(late).toHaveLength(events.length);
    // What was kept as a delta is rebuilt (a new object, equal); what was not is the event itself.
    const rebuilt = late.map((e, i) => e !== events[i]);
    expect(rebuilt).toEqual([
      false, true, // AgentStart; MessageStart, its message copied as it was when emitted
      false, true, true, // thinking: the first update does not build on the copy (another usage object), the next ones are the message before plus their delta
      false, true, true, // text after the signature changed block 0: kept, then rebuilt
      false, // usage changed
      false, true, true, // tool call start kept; its argument deltas rebuilt (the same snapshot)
      true, true, // text continued, a new keyed block
      false, // MessageEnd
    ]);
    // Rebuilt snapshots share the blocks they did not change, as emitted ones do.
    const [u1, u2] = [late[6], late[7]] as Array<Extract<AgentEvent, { type: 'MessageUpdate' }>>;
    expect(u2.message.content[0]).toBe(u1.message.content[0]);
    expect(u2.message).not.toBe(u1.message);
  });

  it('a subscriber that comes after any event gets every event before it equal, however the runs of deltas were cut', () => {
    // Text in two blocks (interleaved by key), thinking, a tool call between them, a usage change: the kept
    // runs of deltas start and end at many places, and a late subscriber may come inside any of them.
    const b = new AssistantMessageBuilder('m', 'p', 1);
    const start = b.start();
    const events: AgentEvent[] = [{ type: 'MessageStart', loopId: 'L', message: start.type === 'start' ? start.partial : (undefined as never), timestamp: 0 }];
    // The clock's millisecond is shared by three events in a row, across the cuts.
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
    const done = b.finish('toolUse');
    events.push({ type: 'MessageEnd', loopId: 'L', message: done.type === 'done' ? done.message : (undefined as never), timestamp: tick() });
    // A second message: a subscriber that comes while it streams gets the first one's runs cut from the first.
    const c = new AssistantMessageBuilder('m', 'p', 2);
    const second = c.start();
    events.push({ type: 'MessageStart', loopId: 'L', message: second.type === 'start' ? second.partial : (undefined as never), timestamp: tick() });
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
      expect(late).toEqual(events);
      const after = [] as AgentEvent[];
      subject.subscribe({ next: (x) => after.push(x) }); // and once the run has ended
      expect(after).toEqual(events);
    }
  });

  it('replays the time of every delta exactly: shared, wall-clock, fractional, going backwards, far apart', () => {
    // Times are kept only where they change, as a small integer after the first one where they can be.
    const b = new AssistantMessageBuilder('m', 'p', 1);
    const start = b.start();
    const now = 1_764_000_000_123;
    const times = [now, now, now + 1, now + 1.5, now + 0.25, now - 40, now + 2 ** 31, Number.MAX_SAFE_INTEGER, now + 2, now + 2];
    const events: AgentEvent[] = [{ type: 'MessageStart', loopId: 'L', message: start.type === 'start' ? start.partial : (undefined as never), timestamp: now }];
    times.forEach((t, i) => events.push(update('L', b.text(`piece ${i} `), t)));
    const done = b.finish('stop');
    events.push({ type: 'MessageEnd', loopId: 'L', message: done.type === 'done' ? done.message : (undefined as never), timestamp: now + 3 });
    expect(replayOf(events)).toEqual(events);
    expect(replayOf(events).map((e) => e.timestamp)).toEqual(events.map((e) => e.timestamp));
    // A clock in fractions, where the first time kept plus a difference is not the time (1e-9 + (3e-9 - 1e-9) !== 3e-9;
    // the first delta of a block is kept whole, so the times kept begin with the second).
    const c = new AssistantMessageBuilder('m', 'p', 1);
    const first = c.start();
    const tiny: AgentEvent[] = [{ type: 'MessageStart', loopId: 'L', message: first.type === 'start' ? first.partial : (undefined as never), timestamp: 0 }];
    [0, 1e-9, 3e-9, 3e-9, 2e-9].forEach((t, i) => tiny.push(update('L', c.text(`bit ${i} `), t)));
    expect(replayOf(tiny).map((e) => e.timestamp)).toEqual([0, 0, 1e-9, 3e-9, 3e-9, 2e-9]);
  });

  it('an update kept while a late subscriber is replayed to (its timestamp the same as the one before) reaches it, once and in order', () => {
    const b = new AssistantMessageBuilder('m', 'p', 1);
    const start = b.start();
    const events: AgentEvent[] = [{ type: 'MessageStart', loopId: 'L', message: start.type === 'start' ? start.partial : (undefined as never), timestamp: 0 }];
    for (const piece of ['a', 'b', 'c', 'd']) events.push(update('L', b.text(piece), 7));
    const subject = new RunReplay();
    for (const e of events.slice(0, 4)) subject.next(e);
    const late: AgentEvent[] = [];
    subject.subscribe({
      next: (x) => {
        late.push(x);
        if (late.length === 4) subject.next(events[4]!); // kept while the replay delivers the last event it had
      },
    });
    expect(late).toEqual(events);
  });

  it('keeps an update of another loop as it was, and a delta with more fields whole', () => {
    const a = new AssistantMessageBuilder('m', 'p', 1);
    const events: AgentEvent[] = [
      { type: 'MessageStart', loopId: 'A', message: { ...a.partial, content: [] }, timestamp: 0 },
      update('A', a.text('one'), 1),
      update('A', a.text('two'), 2),
      update('B', a.text('three'), 3), // another loop's update: not built on A's
      update('B', a.text('four'), 4, { extra: true } as Partial<StreamDelta>), // kept as its delta object, field included
      update('B', a.text('five'), 5),
    ];
    const late = replayOf(events);
    expect(late).toEqual(events);
    expect(late.map((e, i) => e !== events[i])).toEqual([true, false, true, false, true, true]);
  });

  it('keeps an update whose message changed a field of its own (beyond the AssistantMessage fields) as it was', () => {
    const base = { ...new AssistantMessageBuilder('m', 'p', 1).partial, responseId: 'r1' } as AssistantMessage;
    const m1 = { ...base, content: [{ type: 'text' as const, text: 'ab' }] };
    const m2 = { ...m1, content: [{ type: 'text' as const, text: 'abcd' }] }; // follows m1
    const m3 = { ...m2, responseId: 'r2', content: [{ type: 'text' as const, text: 'abcdef' }] }; // its own field changed
    const at = (message: AssistantMessage, delta: string, t: number): AgentEvent => ({ type: 'MessageUpdate', loopId: 'L', message, delta: { type: 'text', contentIndex: 0, delta }, timestamp: t });
    const events = [at(m1, 'ab', 1), at(m2, 'cd', 2), at(m3, 'ef', 3)];
    const late = replayOf(events);
    expect(late).toEqual(events);
    expect(late.map((e, i) => e !== events[i])).toEqual([false, true, false]);
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
    expect(late).toEqual([...first, next]);
    expect(late[2]).toBe(next);
    expect(error).toEqual(new Error('boom'));
    const after: AgentEvent[] = [];
    subject.subscribe({ next: (e) => after.push(e), error: (e) => (error = `again: ${(e as Error).message}`) });
    expect(after).toEqual([...first, next]);
    expect(error).toBe('again: boom');
  });

  it('a long run (texts kept as lengths, read back from snapshots; hundreds of entries) is replayed equal from anywhere in it', () => {
    // Three messages of a few hundred deltas: surrogate pairs, empty deltas, two text blocks and thinking
    // interleaved, times that repeat. A late subscriber anywhere gets every delta's text as emitted.
    const events: AgentEvent[] = [];
    const pieces = ['héllo ', '😀', '', ' wörld', '𝄞𝄞', 'x'];
    let t = 1_764_000_000_000;
    for (let m = 0; m < 3; m++) {
      const b = new AssistantMessageBuilder('m', 'p', m);
      const start = b.start();
      events.push({ type: 'MessageStart', loopId: 'L', message: start.type === 'start' ? start.partial : (undefined as never), timestamp: t });
      for (let i = 0; i < 150; i++) {
        const piece = pieces[(i * 7 + m) % pieces.length]!;
        const e = i % 40 < 30 ? b.text(piece, 'a') : i % 40 < 35 ? b.thinking(piece) : b.text(piece, 'b');
        events.push(update('L', e, (t += i % 3 === 0 ? 1 : 0)));
      }
      const done = b.finish('stop');
      events.push({ type: 'MessageEnd', loopId: 'L', message: done.type === 'done' ? done.message : (undefined as never), timestamp: ++t });
    }
    for (let at = 0; at <= events.length; at += 13) {
      const subject = new RunReplay();
      const late: AgentEvent[] = [];
      events.forEach((e, i) => {
        if (i === at) subject.subscribe({ next: (x) => late.push(x) });
        subject.next(e);
      });
      if (at >= events.length) subject.subscribe({ next: (x) => late.push(x) });
      expect(late).toEqual(events);
    }
    const texts = replayOf(events).flatMap((e) => (e.type === 'MessageUpdate' ? [e.delta.delta] : []));
    expect(texts).toEqual(events.flatMap((e) => (e.type === 'MessageUpdate' ? [e.delta.delta] : [])));
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

describe('BasicAgent: a late subscriber sees the same events as the first', () => {
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

  it('after the run ended: deep-equal, tool calls and thinking included', async () => {
    const run$ = agent().prompt('hi');
    const early: AgentEvent[] = [];
    run$.subscribe((e) => early.push(e));
    await runToEnd(run$);
    const late = await lastValueFrom(run$.pipe(toArray()));
    expect(early.filter((e) => e.type === 'MessageUpdate').length).toBeGreaterThan(20);
    expect(late).toEqual(early);
  });

  it('mid-run (virtual time): deep-equal, and its transcript counts no delta twice', () => {
    testScheduler().run(({ cold, flush }) => {
      let n = 0;
      const provider = scriptedProvider([{ text: 'streamed slowly to a late page', thinking: 'hmm', chunkDelay: 5 }]);
      const a = new BasicAgent({ model: scriptedModel(), provider, ids: () => `id${++n}`, retry: false });
      const run$ = a.prompt('hi');
      const early: AgentEvent[] = [];
      const late: AgentEvent[] = [];
      let lastText: unknown;
      run$.subscribe((e) => early.push(e));
      cold('27ms a').subscribe(() => {
        expect(early.filter((e) => e.type === 'MessageUpdate').length).toBeGreaterThan(2);
        run$.subscribe((e) => late.push(e));
        run$.pipe(transcript()).subscribe((v) => {
          const last = v.messages.at(-1);
          if (last?.role === 'assistant') lastText = last.content.find((c) => c.type === 'text');
        });
      });
      flush();
      expect(late).toEqual(early);
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
