import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { resumeRetry, type AttemptMark, type StreamReset } from '../../src/index.js';
import { emptyAssistant, type AssistantMessage } from '../../src/types/message.js';
import type { StreamEvent } from '../../src/types/provider.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const M: AttemptMark = { type: 'attempt' };
const p1 = emptyAssistant('m', 'p', 0);
const p2 = emptyAssistant('m', 'p', 1);
const text = (delta: string, partial: AssistantMessage, contentIndex = 0): StreamEvent => ({ type: 'textDelta', contentIndex, delta, partial });
const think = (delta: string, partial: AssistantMessage): StreamEvent => ({ type: 'thinkingDelta', contentIndex: 0, delta, partial });
const done = (t: string): StreamEvent => ({ type: 'done', message: { ...p2, content: [{ type: 'text', text: t }] } });
const reset = (t: string | undefined, template: AssistantMessage = p2): StreamReset => ({
  type: 'reset', reason: 'retryDiverged', message: { ...template, content: t === undefined ? [] : [{ type: 'text', text: t }] },
});

describe('resumeRetry', () => {
  it('passes a first attempt through untouched', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const v = { M, a: text('Hel', p1), b: text('lo', p1), d: done('Hello') };
      expectObservable(cold('M-a-b-d|', v).pipe(resumeRetry())).toBe('--a-b-d|', v);
    });
  });

  it('swallows the prefix a retry repeats, whatever its chunking, and continues where the last attempt broke', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const v = { M, a: text('Hel', p1), b: text('lo wo', p1), c: text('Hello', p2), e: text(' world', p2), d: done('Hello world') };
      const out = { a: v.a, b: v.b, r: text('rld', p2), d: v.d };
      expectObservable(cold('M-a-b-M-c-e-d|', v).pipe(resumeRetry())).toBe('--a-b-----r-d|', out);
    });
  });

  it('a retry that diverges mid-block: a reset to the shared content, then the rest of the new attempt', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const v = { M, a: text('Hello', p1), c: text('Howdy', p2), d: done('Howdy') };
      const out = { a: v.a, r: reset('H'), o: text('owdy', p2), d: v.d };
      expectObservable(cold('M-a-M-c-----d|', v).pipe(resumeRetry())).toBe('--a---(ro)--d|', out);
    });
  });

  it('a retry that diverges at once resets to empty content', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const v = { M, a: text('Yes', p1), c: text('No', p2), d: done('No') };
      expectObservable(cold('M-a-M-c-----d|', v).pipe(resumeRetry())).toBe('--a---(rc)--d|', { ...v, r: reset(undefined) });
    });
  });

  it('a retry that ends before retracing what was shown resets to its own (shorter) content before done', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const v = { M, a: text('Hello wo', p1), c: text('Hello', p2), d: done('Hello') };
      expectObservable(cold('M-a-M-c-(d|)', v).pipe(resumeRetry())).toBe('--a-----(rd|)', { ...v, r: reset('Hello') });
    });
  });

  it('a retry that stops exactly where the last attempt broke emits nothing extra', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const v = { M, a: text('Hi', p1), c: text('Hi', p2), d: done('Hi') };
      expectObservable(cold('M-a-M-c-d|', v).pipe(resumeRetry())).toBe('--a-----d|', v);
    });
  });

  it('several blocks: a retry retraces the first whole and resumes inside the second; after a reset, a third attempt resumes from the reset content', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const v = {
        M, k: think('Plan', p1), a: text('Hel', p1, 1), b: text('lo', p1, 1),
        l: think('Pl', p2), n: think('an', p2), c: text('Hello there', p2, 1), x: text('Hi', p2, 1), y: text('Hi!', p2, 1), d: done('Hello there'),
      };
      // Retraced: "Plan" in two chunks, "Hello" in one; " there" is new.
      expectObservable(cold('M-k-a-b-M-l-n-c-d|', v).pipe(resumeRetry())).toBe('--k-a-b-------o-d|', { ...v, o: text(' there', p2, 1) });
      // The second attempt diverges in block 1 after "H": reset to "Plan" + "H"; the third attempt retraces that and goes on.
      const r: StreamReset = { type: 'reset', reason: 'retryDiverged', message: { ...p2, content: [{ type: 'thinking', thinking: 'Plan' }, { type: 'text', text: 'H' }] } };
      expectObservable(cold('M-k-a-M-l-n-x-M-l-n-y-d|', v).pipe(resumeRetry())).toBe('--k-a-------(ri)----j-d|', { ...v, r, i: text('i', p2, 1), j: text('!', p2, 1) });
    });
  });

  it('tool calls: the same id is resumed, another id diverges', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const start = (id: string, partial: AssistantMessage): StreamEvent => ({ type: 'toolCallStart', contentIndex: 0, id, name: 'add', partial });
      const args = (delta: string, partial: AssistantMessage): StreamEvent => ({ type: 'toolCallDelta', contentIndex: 0, delta, partial });
      const v = { M, s: start('c1', p1), a: args('{"a":', p1), t: start('c1', p2), b: args('{"a":1}', p2), u: start('c2', p2) };
      expectObservable(cold('M-s-a-M-t-b|', v).pipe(resumeRetry())).toBe('--s-a-----c|', { ...v, c: args('1}', p2) });
      expectObservable(cold('M-s-a-M-u-----b|', v).pipe(resumeRetry())).toBe('--s-a---(ru)--b|', { ...v, r: reset(undefined) });
    });
  });

  describe('with snapshots that hold their deltas (what AssistantMessageBuilder makes): their texts stand for what was shown', () => {
    /** A snapshot of `base` whose blocks hold these texts (thinking first when given). */
    const snap = (base: AssistantMessage, texts: { thinking?: string; text?: string }): AssistantMessage => ({
      ...base,
      content: [
        ...(texts.thinking !== undefined ? [{ type: 'thinking' as const, thinking: texts.thinking }] : []),
        ...(texts.text !== undefined ? [{ type: 'text' as const, text: texts.text }] : []),
      ],
    });

    it('swallows the prefix a retry repeats and continues where the last attempt broke', () => {
      scheduler().run(({ cold, expectObservable }) => {
        const v = {
          M, a: text('Hel', snap(p1, { text: 'Hel' })), b: text('lo wo', snap(p1, { text: 'Hello wo' })),
          c: text('Hello', snap(p2, { text: 'Hello' })), e: text(' world', snap(p2, { text: 'Hello world' })), d: done('Hello world'),
        };
        expectObservable(cold('M-a-b-M-c-e-d|', v).pipe(resumeRetry())).toBe('--a-b-----r-d|', { ...v, r: text('rld', snap(p2, { text: 'Hello world' })) }); // equal, not the same object
      });
    });

    it('a retry that diverges mid-block resets to the shared content', () => {
      scheduler().run(({ cold, expectObservable }) => {
        const howdy = snap(p2, { text: 'Howdy' });
        const v = { M, a: text('Hello', snap(p1, { text: 'Hello' })), c: text('Howdy', howdy), d: done('Howdy') };
        expectObservable(cold('M-a-M-c-----d|', v).pipe(resumeRetry())).toBe('--a---(ro)--d|', { ...v, r: reset('H'), o: text('owdy', howdy) });
      });
    });

    it('several blocks: a retry retraces the thinking whole and resumes inside the text', () => {
      scheduler().run(({ cold, expectObservable }) => {
        const there = snap(p2, { thinking: 'Plan', text: 'Hello there' });
        const v = {
          M, k: think('Plan', snap(p1, { thinking: 'Plan' })), a: text('Hel', snap(p1, { thinking: 'Plan', text: 'Hel' }), 1),
          b: text('lo', snap(p1, { thinking: 'Plan', text: 'Hello' }), 1), l: think('Pl', snap(p2, { thinking: 'Pl' })),
          n: think('an', snap(p2, { thinking: 'Plan' })), c: text('Hello there', there, 1), d: done('Hello there'),
        };
        expectObservable(cold('M-k-a-b-M-l-n-c-d|', v).pipe(resumeRetry())).toBe('--k-a-b-------o-d|', { ...v, o: text(' there', there, 1) });
      });
    });

    it('a block a later snapshot changed without a delta counts as it was shown', () => {
      scheduler().run(({ cold, expectObservable }) => {
        const hello = snap(p2, { thinking: 'Plan', text: 'Hello' });
        const v = {
          M, k: think('Plan', snap(p1, { thinking: 'Plan' })), a: text('Hel', snap(p1, { thinking: 'Plan!!', text: 'Hel' }), 1),
          l: think('Plan', snap(p2, { thinking: 'Plan' })), c: text('Hello', hello, 1), d: done('Hello'),
        };
        // The retry retraces "Plan" as shown (not the "Plan!!" the last snapshot carried) and resumes after "Hel".
        expectObservable(cold('M-k-a-M-l-c-d|', v).pipe(resumeRetry())).toBe('--k-a-----o-d|', { ...v, o: text('lo', hello, 1) });
      });
    });

    it('a snapshot that no longer holds a block shown before (shorter, or gone): what was shown is still known exactly', () => {
      scheduler().run(({ cold, expectObservable }) => {
        const hello = snap(p2, { thinking: 'Plan', text: 'Hello' });
        // "Plan" is shown, then "Hel" comes with a snapshot whose thinking is "Pl": "Plan" is what was shown.
        const v = {
          M, k: think('Plan', snap(p1, { thinking: 'Plan' })), a: text('Hel', snap(p1, { thinking: 'Pl', text: 'Hel' }), 1),
          l: think('Plan', snap(p2, { thinking: 'Plan' })), c: text('Hello', hello, 1), d: done('Hello'),
        };
        expectObservable(cold('M-k-a-M-l-c-d|', v).pipe(resumeRetry())).toBe('--k-a-----o-d|', { ...v, o: text('lo', hello, 1) });
        // The same when the snapshot has no thinking block there any more.
        const w = { ...v, a: text('Hel', { ...p1, content: [{ type: 'text', text: 'Plan' }, { type: 'text', text: 'Hel' }] }, 1) };
        expectObservable(cold('M-k-a-M-l-c-d|', w).pipe(resumeRetry())).toBe('--k-a-----o-d|', { ...w, o: text('lo', hello, 1) });
      });
    });

    it('a snapshot that shortens a block shown before while a later block goes on: what was shown of both is still known', () => {
      scheduler().run(({ cold, expectObservable }) => {
        const there = snap(p2, { thinking: 'Plan', text: 'Hello there' });
        // "Plan", then "Hel" held by its snapshot; then "lo" goes on with the text, but its snapshot's thinking is "Pl".
        const v = {
          M, k: think('Plan', snap(p1, { thinking: 'Plan' })), a: text('Hel', snap(p1, { thinking: 'Plan', text: 'Hel' }), 1),
          b: text('lo', snap(p1, { thinking: 'Pl', text: 'Hello' }), 1), l: think('Plan', snap(p2, { thinking: 'Plan' })),
          c: text('Hello there', there, 1), d: done('Hello there'),
        };
        // The retry retraces "Plan" and "Hello" as shown, and resumes after them.
        expectObservable(cold('M-k-a-b-M-l-c-d|', v).pipe(resumeRetry())).toBe('--k-a-b-----o-d|', { ...v, o: text(' there', there, 1) });
      });
    });

    it('a snapshot that stops holding its deltas mid-block: what was shown is still known exactly, and a retry resumes after it', () => {
      scheduler().run(({ cold, expectObservable }) => {
        // "Hel" is held by its snapshot; "lo" comes with a stale one (still "Hel"): from there the texts are recorded.
        const world = snap(p2, { text: 'Hello world' });
        const help = snap(p2, { text: 'Help' });
        const v = {
          M, a: text('Hel', snap(p1, { text: 'Hel' })), b: text('lo', snap(p1, { text: 'Hel' })), z: text(' wo', p1),
          c: text('Hello', snap(p2, { text: 'Hello' })), e: text(' world', world), d: done('Hello world'),
        };
        expectObservable(cold('M-a-b-z-M-c-e-d|', v).pipe(resumeRetry())).toBe('--a-b-z-----r-d|', { ...v, r: text('rld', world) });
        // The same after a divergence: the reset holds exactly what both attempts share.
        const w = { ...v, c: text('Help', help) };
        expectObservable(cold('M-a-b-z-M-c---d|', w).pipe(resumeRetry())).toBe('--a-b-z---(ro)d|', { ...w, r: reset('Hel'), o: text('p', help), d: v.d });
      });
    });
  });
});
