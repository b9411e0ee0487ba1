import { describe, expect, it } from 'vitest';
import { from, lastValueFrom, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { recordSession } from '../../src/operators/record-session.js';
import { getLoop, SessionRecorder } from '../../src/session/index.js';
import type { AgentEvent } from '../../src/types/events.js';
import { loopEvents } from '../session/events.js';

function scheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

const events = loopEvents({ sessionId: 's', loopId: 's.1', t: 0 });
const [start, turnStart, , , , update] = events as [AgentEvent, AgentEvent, AgentEvent, AgentEvent, AgentEvent, AgentEvent];
const end = events.at(-1)!;

describe('recordSession', () => {
  it('passes every event through unchanged, at the same time, and records them', () => {
    scheduler().run(({ cold, expectObservable, flush }) => {
      const recorder = new SessionRecorder();
      const values = { a: start, b: turnStart, u: update, z: end };
      const source = cold('a-b-u--z|', values);
      expectObservable(source.pipe(recordSession(recorder))).toBe('a-b-u--z|', values);
      flush();
      const loop = getLoop(recorder.getSession('s')!, 's.1')!;
      expect(loop.events).toEqual([start, turnStart, end]); // the delta is not kept by default
      expect(loop.status).toBe('completed');
    });
  });

  it('emits the very same objects and feeds the recorder as each passes', async () => {
    const recorder = new SessionRecorder();
    const seenByRecorder: number[] = [];
    const out = await lastValueFrom(
      from(events).pipe(
        recordSession({
          onEvent: (e) => {
            seenByRecorder.push(events.indexOf(e));
            recorder.onEvent(e);
          },
        }),
        toArray(),
      ),
    );
    expect(out.length).toBe(events.length);
    out.forEach((e, i) => expect(e).toBe(events[i]));
    expect(seenByRecorder).toEqual(events.map((_, i) => i));
    expect(getLoop(recorder.getSession('s')!, 's.1')!.status).toBe('completed');
  });

  it('passes errors and completion through', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const recorder = new SessionRecorder();
      expectObservable(cold('a-#', { a: start }, new Error('upstream')).pipe(recordSession(recorder))).toBe('a-#', { a: start }, new Error('upstream'));
      expectObservable(cold<AgentEvent>('|').pipe(recordSession(recorder))).toBe('|');
    });
  });

  it('keeps the stream going when the recorder throws, and reports the failure', () => {
    scheduler().run(({ cold, expectObservable, flush }) => {
      const failures: AgentEvent[] = [];
      const broken = {
        onEvent(): void {
          throw new Error('disk full');
        },
      };
      const values = { a: start, b: turnStart, z: end };
      expectObservable(
        cold('a-b-z|', values).pipe(recordSession(broken, { onError: (_e, event) => void failures.push(event) })),
      ).toBe('a-b-z|', values);
      flush();
      expect(failures).toEqual([start, turnStart, end]);
    });
  });

  it('keeps the stream going even when the error listener throws too', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const broken = { onEvent: (): void => { throw new Error('a'); } };
      const onError = (): void => {
        throw new Error('b');
      };
      expectObservable(cold('a-b|', { a: start, b: end }).pipe(recordSession(broken, { onError }))).toBe('a-b|', { a: start, b: end });
    });
  });

  it('does not subscribe twice or change the subscription', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('a-b|', { a: start, b: end });
      expectObservable(source.pipe(recordSession(new SessionRecorder())), '^-!').toBe('a-', { a: start });
      expectSubscriptions(source.subscriptions).toBe('^-!');
    });
  });

  it('hands a sink that records no streaming events no MessageUpdate, and one that does every one', () => {
    scheduler().run(({ cold, expectObservable, flush }) => {
      const values = { a: start, b: turnStart, u: update, z: end };
      const seen: { quiet: string[]; all: string[] } = { quiet: [], all: [] };
      const quiet = { recordsStreamingEvents: false, onEvent: (e: AgentEvent) => void seen.quiet.push(e.type) };
      const all = { onEvent: (e: AgentEvent) => void seen.all.push(e.type) };
      expectObservable(cold('a-b-u--z|', values).pipe(recordSession(quiet))).toBe('a-b-u--z|', values);
      expectObservable(cold('a-b-u--z|', values).pipe(recordSession(all))).toBe('a-b-u--z|', values);
      flush();
      expect(seen.quiet).toEqual(['AgentStart', 'TurnStart', 'AgentEnd']);
      expect(seen.all).toEqual(['AgentStart', 'TurnStart', 'MessageUpdate', 'AgentEnd']);
    });
  });

  it('a SessionRecorder says whether it keeps streaming events, and keeps them when asked', () => {
    expect(new SessionRecorder().recordsStreamingEvents).toBe(false);
    const keeping = new SessionRecorder({ recordStreamingEvents: true });
    expect(keeping.recordsStreamingEvents).toBe(true);
    scheduler().run(({ cold, expectObservable, flush }) => {
      const values = { a: start, b: turnStart, u: update, z: end };
      expectObservable(cold('a-b-u--z|', values).pipe(recordSession(keeping))).toBe('a-b-u--z|', values);
      flush();
    });
    expect(getLoop(keeping.getSession('s')!, 's.1')!.events.map((e) => e.type)).toEqual(['AgentStart', 'TurnStart', 'MessageUpdate', 'AgentEnd']);
  });

  it('tears the source down when the output is unsubscribed, and after an error or completion', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const failing = cold('a-#', { a: start }, new Error('upstream'));
      const ending = cold('a-b|', { a: start, b: end });
      expectObservable(failing.pipe(recordSession(new SessionRecorder()))).toBe('a-#', { a: start }, new Error('upstream'));
      expectObservable(ending.pipe(recordSession(new SessionRecorder()))).toBe('a-b|', { a: start, b: end });
      expectSubscriptions(failing.subscriptions).toBe('^-!');
      expectSubscriptions(ending.subscriptions).toBe('^--!');
    });
  });
});
