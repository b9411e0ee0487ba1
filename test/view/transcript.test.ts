import { describe, expect, it } from 'vitest';
import { lastValueFrom, map, tap, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { type AgentEvent, agentLoop, transcript, type Transcript, userMessage } from '../../src/index.js';
import { scriptedProvider } from '../../src/testing/index.js';
import { addTool, context, model } from '../agent/helpers.js';
import { loopId, runEvents } from './fixtures.js';
import { emptyAssistant } from '../../src/types/message.js';

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const streamingText = (t: Transcript) => t.streaming?.content.map((b) => (b.type === 'text' ? b.text : b.type)).join('|') ?? '-';

describe('transcript()', () => {
  it('emits one snapshot per event that changes something (marbles)', () => {
    const { ev } = runEvents();
    scheduler().run(({ cold, expectObservable }) => {
      const events = cold('APpTMuvcdmXgxtZ|', ev);
      const view = events.pipe(transcript());
      // P (a user MessageStart) and T (turn 0 again) change nothing and emit nothing
      expectObservable(view.pipe(map((t) => t.status))).toBe('a-a-aaaaaaaaaab|', { a: 'running', b: 'ended' });
      expectObservable(view.pipe(map(streamingText))).toBe('a-a-bcdeeaaaaaa|', {
        a: '-',
        b: '',
        c: 'Hel',
        d: 'Hello',
        e: 'Hello|toolCall',
      });
    });
  });

  it('folds messages, tool calls with progress and result, usage and the stop reason', async () => {
    const { ev, prompt, final, usage } = runEvents();
    const views: Transcript[] = [];
    const s = scheduler();
    s.createColdObservable('APpTMuvcdmXgxtZ|', ev).pipe(transcript()).subscribe((v) => views.push(v));
    s.flush();
    const last = views.at(-1)!;
    expect(last.messages).toEqual([prompt, final]);
    expect(last.streaming).toBeUndefined();
    expect(last.toolCalls).toEqual([
      { id: 'c1', name: 'weather', args: { city: 'Paris' }, status: 'done', progress: ['asking'], partialResult: undefined, result: { content: [{ type: 'text', text: '18°C' }] } },
    ]);
    expect(last.usage).toEqual(usage);
    expect(last).toMatchObject({ status: 'ended', stopReason: 'stop', loopId });
    const running = views.find((v) => v.toolCalls[0]?.status === 'running')!;
    expect(running.toolCalls[0]!.progress).toEqual([]);
    const streamingCall = views.find((v) => v.streaming?.content[1]?.type === 'toolCall' && Object.keys(v.streaming.content[1].arguments).length > 0)!;
    expect(streamingCall.streaming!.content[1]).toEqual({ type: 'toolCall', id: 'c1', name: 'weather', arguments: { city: 'Paris' } });
  });

  it('keeps unchanged parts reference-equal and never changes a snapshot once emitted', () => {
    const { ev, live } = runEvents();
    const views: Transcript[] = [];
    const s = scheduler();
    s.createColdObservable('APpTMuvcdmXgxtZ|', ev).pipe(transcript()).subscribe((v) => views.push(v));
    s.flush();
    const frozen = JSON.stringify(views);
    // the loop's live partial is mutated after the fact: no snapshot may see it
    live.content.push({ type: 'text', text: 'MUTATED' });
    expect(JSON.stringify(views)).toBe(frozen);
    const [hel, hello, call] = views.filter((v) => v.streaming && v.streaming.content.length > 0);
    expect(hel!.streaming!.content[0]).not.toBe(hello!.streaming!.content[0]);
    expect(call!.streaming!.content[0]).toBe(hello!.streaming!.content[0]); // the text block did not change
    for (let i = 1; i < views.length; i++) {
      const [a, b] = [views[i - 1]!, views[i]!];
      expect(a).not.toBe(b);
      if (a.messages.length === b.messages.length) expect(b.messages).toBe(a.messages);
      if (a.toolCalls.length === b.toolCalls.length && a.toolCalls.every((t, j) => JSON.stringify(t) === JSON.stringify(b.toolCalls[j]))) {
        expect(b.toolCalls).toBe(a.toolCalls);
      }
    }
    const withTool = views.filter((v) => v.toolCalls.length > 0);
    expect(withTool.at(-1)!.messages[0]).toBe(withTool[0]!.messages[0]);
  });

  it('leaves out events of other loops (a sub-agent started while running)', () => {
    const { ev } = runEvents();
    const child = { type: 'AgentStart', agentId: 'a', sessionId: 's', loopId: 'child.1', parentLoopId: loopId, timestamp: 1 } as const;
    const childText = { ...ev.u!, loopId: 'child.1' };
    const views: Transcript[] = [];
    const s = scheduler();
    s.createColdObservable('AMcuZ|', { ...ev, c: child, u: childText }).pipe(transcript()).subscribe((v) => views.push(v));
    s.flush();
    expect(views.map((v) => v.loopId)).toEqual([loopId, loopId, loopId]);
    expect(views[1]!.streaming!.content).toEqual([]);
  });

  it('picks up mid-message without doubling the delta already in the live partial', () => {
    const { ev, live } = runEvents();
    live.content.push({ type: 'text', text: 'Hel' });
    const views: Transcript[] = [];
    const s = scheduler();
    s.createColdObservable('uv|', ev).pipe(transcript()).subscribe((v) => views.push(v));
    s.flush();
    expect(views.map(streamingText)).toEqual(['Hel', 'Hello']);
  });

  it('over a real run, the last snapshot holds exactly the conversation the run produced', async () => {
    const provider = scriptedProvider([{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: 'It is 5, as computed.' }]);
    const run$ = agentLoop([userMessage('2+3?', 0)], context([addTool]), { model, provider, retry: false });
    // folded live: the loop's MessageStart carries its live partial, complete only after the fact
    const events: AgentEvent[] = [];
    const folded = await lastValueFrom(run$.pipe(tap((e) => events.push(e)), transcript(), toArray()));
    const end = events.find((e) => e.type === 'AgentEnd')!;
    const last = folded.at(-1)!;
    expect(last.messages).toEqual(end.type === 'AgentEnd' ? end.messages : []);
    expect(last.toolCalls.map((t) => [t.name, t.status])).toEqual([['add', 'done']]);
    const texts = folded.map(streamingText).filter((t) => t.startsWith('It'));
    expect(texts.at(-1)).toBe('It is 5, as computed.');
    expect(texts.every((t, i) => i === 0 || t.startsWith(texts[i - 1]!))).toBe(true);
  });
});

describe('transcript() and MessageReset', () => {
  it('a reset discards the streamed message; the deltas after it build on its message', () => {
    const { ev } = runEvents();
    const kept = { ...emptyAssistant('m', 'p', 1), content: [{ type: 'text' as const, text: 'He' }] };
    const reset: AgentEvent = { type: 'MessageReset', loopId, message: kept, reason: 'retryDiverged', timestamp: 1 };
    const after: AgentEvent = { type: 'MessageUpdate', loopId, message: { ...kept, content: [{ type: 'text', text: 'Hey' }] }, delta: { type: 'text', contentIndex: 0, delta: 'y' }, timestamp: 1 };
    const views: Transcript[] = [];
    const s = new TestScheduler((a, b) => expect(a).toEqual(b));
    s.createColdObservable('AMuvRw|', { ...ev, R: reset, w: after }).pipe(transcript()).subscribe((v) => views.push(v));
    s.flush();
    expect(views.map(streamingText)).toEqual(['-', '', 'Hel', 'Hello', 'He', 'Hey']);
    kept.content[0]!.text = 'MUTATED';
    expect(streamingText(views[4]!)).toBe('He');
  });
});
