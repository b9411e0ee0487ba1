import { describe, expect, it } from 'vitest';
import { from as rxFrom, lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { BasicAgent, defineTool, runToEnd, transcript, type AgentEvent, type Transcript } from '../../src/index.js';
import { scriptedModel, scriptedProvider, type ScriptStep } from '../../src/testing/index.js';
import { emptyAssistant, type AssistantMessage } from '../../src/types/message.js';
import type { StreamEvent } from '../../src/types/provider.js';
import { caughtUp, fixtureReport, testScheduler } from './helpers.js';

function agent(script: ScriptStep[]) {
  const provider = scriptedProvider(script);
  let n = 0;
  return { agent: new BasicAgent({ model: scriptedModel(), provider, ids: () => `id${++n}`, retry: false }), provider };
}

/** The transcript of `events`, folded one by one, as `transcript()` does. */
function fold(events: readonly AgentEvent[]): Transcript {
  let last: Transcript | undefined;
  rxFrom(events).pipe(transcript()).subscribe((t) => (last = t));
  return last!;
}

describe('BasicAgent: hot where a UI needs it', () => {
  it('state$ has a current value at once, and follows the runs', async () => {
    const { agent: a } = agent([{ text: 'Hello there' }]);
    const first: Transcript[] = [];
    a.state$.subscribe((s) => first.push(s)).unsubscribe();
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ status: 'idle', messages: [] });
    const seen: Transcript[] = [];
    a.state$.subscribe((s) => seen.push(s));
    await a.run('hi');
    expect(a.state).toBe(seen.at(-1));
    expect(a.state).toMatchObject({ status: 'ended', stopReason: 'stop' });
    expect(a.state.messages).toEqual(a.messages);
    expect(seen.some((s) => s.streaming?.content[0]?.type === 'text')).toBe(true);
    a.reset();
    expect(a.state.status).toBe('idle');
  });

  it('state read without a subscriber equals the transcript of the same events, folded one by one', async () => {
    const { agent: a } = agent([{ text: 'Hello there, this streams in many deltas', thinking: 'think first' }, { text: 'and a second run' }]);
    const events: AgentEvent[] = [];
    a.events$.subscribe((e) => events.push(e));
    await a.run('hi');
    const midway = a.state; // read between runs: the first run's waiting events are folded now
    await a.run('again');
    const expected = await lastValueFrom(rxFrom(events).pipe(transcript()));
    expect(a.state).toEqual(expected);
    expect(midway.messages).toHaveLength(2);
    expect(a.state.messages.at(-1)).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'and a second run' }] });
  });

  it('state read mid-message without a subscriber shows exactly the text streamed so far', async () => {
    let soFar = '';
    const seen: string[] = [];
    const { agent: b } = agent([{ text: 'Hello there, this streams in many deltas' }]);
    await new Promise<void>((resolve, reject) =>
      b.prompt('hi').subscribe({
        next: (e) => {
          if (e.type !== 'MessageUpdate' || e.delta.type !== 'text') return;
          soFar += e.delta.delta;
          // Every third delta: several deltas waited unfolded and are folded as one here.
          if (seen.length % 3 === 0 || soFar.length % 12 === 0) {
            const block = b.state.streaming?.content[0];
            seen.push(block?.type === 'text' ? block.text : '');
            expect(seen.at(-1)).toBe(soFar);
          } else seen.push(soFar);
        },
        error: reject,
        complete: resolve,
      }),
    );
    expect(soFar).toBe('Hello there, this streams in many deltas');
  });

  it('state read at any event, without a subscriber, equals the transcript of the events so far (thinking, text, tool calls, two runs)', async () => {
    const echo = defineTool({ name: 'echo', description: 'echo', parameters: z.object({ say: z.string() }), execute: ({ say }) => say });
    for (const every of [1, 2, 3, 5, 7, 1000]) {
      const turns: ScriptStep[] = [
        { thinking: 'let me think about it', text: 'I will call two tools now', toolCalls: [{ name: 'echo', arguments: { say: 'one' } }, { name: 'echo', arguments: { say: 'two' } }], chunkSize: 3 },
        { text: 'both answered, and this is the end', chunkSize: 4 },
        { thinking: 'again', text: 'a second run streams too', chunkSize: 2 },
      ];
      const { agent: a } = agent(turns);
      a.withTools(echo);
      const events: AgentEvent[] = [];
      let n = 0;
      const check = (e: AgentEvent): void => {
        events.push(e);
        if (++n % every !== 0) return;
        const expected = fold(events);
        expect(a.state, `read after event ${n} (${e.type}), every ${every}`).toEqual(expected);
      };
      await new Promise<void>((resolve, reject) => a.prompt('hi').subscribe({ next: check, error: reject, complete: resolve }));
      expect(a.state.toolCalls.map((t) => [t.name, t.status])).toEqual([['echo', 'done'], ['echo', 'done']]);
      await new Promise<void>((resolve, reject) => a.prompt('again').subscribe({ next: check, error: reject, complete: resolve }));
      expect(a.state).toEqual(fold(events));
      expect(a.state.messages.at(-1)).toMatchObject({ role: 'assistant', content: [{ type: 'thinking' }, { type: 'text', text: 'a second run streams too' }] });
    }
  });

  it('state read at any event equals the fold of the events when a provider\'s snapshots do not hold its deltas', async () => {
    // A hand-written provider: its second delta's snapshot is stale (it lacks "cd"), and the later ones never get "cd".
    const at = (text: string): AssistantMessage => ({ ...emptyAssistant('m', 'custom', 0), content: [{ type: 'text', text }] });
    const stream: StreamEvent[] = [
      { type: 'start', partial: emptyAssistant('m', 'custom', 0) },
      { type: 'textDelta', contentIndex: 0, delta: 'ab', partial: at('ab') },
      { type: 'textDelta', contentIndex: 0, delta: 'cd', partial: at('ab') },
      { type: 'textDelta', contentIndex: 0, delta: 'ef', partial: at('abef') },
      { type: 'textDelta', contentIndex: 0, delta: 'gh', partial: at('abefgh') },
      { type: 'done', message: at('abcdefgh') },
    ];
    for (const every of [1, 2, 3, 1000]) {
      const a = new BasicAgent({ model: scriptedModel(), provider: () => rxFrom(stream), retry: false });
      const events: AgentEvent[] = [];
      const read: Array<[string, Transcript, Transcript]> = [];
      await new Promise<void>((resolve, reject) => a.prompt('hi').subscribe({
        next: (e) => {
          events.push(e);
          if (events.length % every === 0) read.push([`read after event ${events.length} (${e.type}), every ${every}`, a.state, fold(events)]);
        },
        error: reject,
        complete: resolve,
      }));
      for (const [when, state, expected] of read) expect(state, when).toEqual(expected);
      expect(a.state).toEqual(fold(events));
    }
  });

  it('the view state and late subscribers share the runs of deltas: read, watched and mounted anywhere, each sees every delta once', () => {
    // Every combination of: the state read mid-message (which ends the run of deltas gathered so far), state$ watched
    // for a while (the store folds each delta, then gathers again), and a subscriber mounted late (which ends it too).
    for (const [readAt, watchFrom, watchTo, mountAt] of [[3, 5, 9, 7], [7, 2, 4, 3], [4, 6, 30, 5], [30, 1, 2, 12], [9, 30, 31, 9]] as const) {
      testScheduler().run(({ flush }) => {
        const { agent: a } = agent([{ text: 'streamed slowly, delta after delta, to the page', thinking: 'a thought first', chunkDelay: 2, toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, { text: 'and a second answer' }]);
        a.withTools(defineTool({ name: 'echo', description: 'Echoes.', parameters: z.object({ text: z.string() }), execute: ({ text }) => text }));
        const run$ = a.prompt('hi');
        const early: AgentEvent[] = [];
        const late: AgentEvent[] = [];
        const reads: Array<[number, Transcript, Transcript]> = [];
        let watching: { unsubscribe(): void } | undefined;
        run$.subscribe((e) => {
          early.push(e);
          const n = early.length;
          if (n === readAt) reads.push([n, a.state, fold(early)]);
          if (n === watchFrom) watching = a.state$.subscribe();
          if (n === watchTo) watching?.unsubscribe();
          if (n === mountAt) run$.subscribe((x) => late.push(x));
          if (n % 4 === 0 && n > watchTo) reads.push([n, a.state, fold(early)]);
        });
        flush();
        const at = `read at ${readAt}, watched ${watchFrom}–${watchTo}, mounted at ${mountAt}`;
        expect(early.at(-1)?.type, at).toBe('AgentEnd');
        for (const [n, state, expected] of reads) expect(state, `${at}: state after event ${n}`).toEqual(expected);
        expect(a.state, at).toEqual(fold(early));
        expect(late, at).toEqual([...caughtUp(early.slice(0, mountAt)), ...early.slice(mountAt)]);
        const after = [] as AgentEvent[];
        run$.subscribe((x) => after.push(x));
        expect(fold(after), at).toEqual(fold(early));
        expect(after.filter((e) => e.type !== 'MessageUpdate'), at).toEqual(early.filter((e) => e.type !== 'MessageUpdate'));
      });
    }
  });

  it('one prompt runs once however many subscribe: subscribe + runToEnd share one run', async () => {
    const { agent: a, provider } = agent([{ text: 'only once' }, { text: 'a second run' }]);
    const run$ = a.prompt('hi');
    const events: AgentEvent[] = [];
    run$.subscribe((e) => events.push(e));
    const end = await runToEnd(run$);
    expect(provider.requests).toHaveLength(1);
    expect(end.messages.at(-1)).toMatchObject({ role: 'assistant' });
    expect(events.at(-1)).toBe(end);
    // after the end, a subscriber catches up on the same run (each run of deltas as one update), not a new run
    const again = await lastValueFrom(run$.pipe(toArray()));
    expect(again).toEqual(caughtUp(events));
    expect(fold(again)).toEqual(fold(events));
    expect(provider.requests).toHaveLength(1);
  });

  it('a subscriber mounted mid-run catches up on that run\'s events, then follows it live (virtual time)', () => {
    testScheduler().run(({ cold, flush }) => {
      const { agent: a } = agent([{ text: 'streamed slowly to the page', chunkDelay: 5 }]);
      const run$ = a.prompt('hi');
      const early: AgentEvent[] = [];
      const late: AgentEvent[] = [];
      const lateViews: Transcript[] = [];
      let mountedAt = 0;
      run$.subscribe((e) => early.push(e));
      cold('12ms a').subscribe(() => {
        expect(early.filter((e) => e.type === 'MessageUpdate').length).toBeGreaterThan(1); // mounted mid-reply
        mountedAt = early.length;
        run$.subscribe((e) => late.push(e));
        run$.pipe(transcript()).subscribe((v) => lateViews.push(v));
      });
      flush();
      // What it missed, each run of deltas as one update; then every event live.
      expect(late).toEqual([...caughtUp(early.slice(0, mountedAt)), ...early.slice(mountedAt)]);
      expect(late.length).toBeLessThan(early.length);
      const text = lateViews.map((v) => v.streaming?.content[0]).filter((b) => b?.type === 'text').at(-1);
      expect(text).toEqual({ type: 'text', text: 'streamed slowly to the page' }); // no delta counted twice
    });
  });

  it('when every subscriber leaves, the run is cancelled as before', () => {
    testScheduler().run(({ cold, flush }) => {
      const { agent: a } = agent([{ text: 'never finished', delay: 50 }]);
      const run$ = a.prompt('hi');
      const one = run$.subscribe();
      const two = run$.subscribe();
      expect(a.isStreaming).toBe(true);
      cold('10ms a').subscribe(() => {
        one.unsubscribe();
        expect(a.isStreaming).toBe(true);
        two.unsubscribe();
        expect(a.isStreaming).toBe(false);
      });
      flush();
    });
  });
});

describe('BasicAgent: what a hot run keeps for later subscribers', () => {
  // In a child process with --expose-gc: the first turn's delta objects still alive while the run waits in its second turn.
  it('keeps its replay log only while its Observable can still be subscribed to', async () => {
    expect(await fixtureReport('replay-retention', ['--expose-gc'])).toEqual({
      droppedAlive: 0, // `agent.prompt(x).subscribe(…)`: nobody can subscribe later, nothing is kept
      keptAlive: 8, // the Observable is held: of each of the 8 runs of deltas to one block, the last update is kept, no other
      sameEvents: true,
      lateCaughtUp: true, // and a late subscriber of the held one catches up on every event so far, each run of deltas as one update
      agentsCollectedInOneJob: 20, // agents run to the end in one job are collected in it (nothing keeps them to its end)
    });
  }, 90_000);
});
