import { describe, expect, it } from 'vitest';
import { concat, NEVER, of } from 'rxjs';
import { agentLoop, textOf, userMessage, type AgentEvent, type AssistantMessage, type Provider } from '../../src/index.js';
import { emptyAssistant } from '../../src/types/message.js';
import { agentEnd, context, events, model } from '../agent/helpers.js';

const partial = (): AssistantMessage => emptyAssistant(model.id, model.provider, 0);
const final = (text: string): AssistantMessage => ({ ...partial(), content: [{ type: 'text', text }] });

/** Runs one prompt against `provider` (retries on, to show a breach is not retried) and returns the events. */
async function runWith(provider: (calls: { n: number }) => unknown): Promise<{ all: AgentEvent[]; calls: number }> {
  const calls = { n: 0 };
  const wrapped = ((..._args: unknown[]) => (calls.n++, provider(calls))) as unknown as Provider;
  const all = await events(agentLoop([userMessage('hi', 0)], context([]), { model, provider: wrapped, retry: { maxRetries: 3, initialDelayMs: 0, jitter: 0 } }));
  return { all, calls: calls.n };
}

/** The assistant message lifecycle: its MessageStart … MessageEnd events, and everything after the MessageEnd. */
function lifecycle(all: AgentEvent[]) {
  const isAssistant = (e: AgentEvent) => (e.type === 'MessageStart' || e.type === 'MessageEnd') && e.message.role === 'assistant';
  const starts = all.filter((e) => e.type === 'MessageStart' && isAssistant(e));
  const ends = all.filter((e) => e.type === 'MessageEnd' && isAssistant(e));
  const after = all.slice(all.indexOf(ends[0]!) + 1).map((e) => e.type);
  return { starts: starts.length, ends: ends.length, after, message: (ends[0] as { message: AssistantMessage }).message };
}

describe('providers that break the contract (issue 12)', () => {
  it.each([
    ['returns a Promise', () => Promise.resolve(of({ type: 'done', message: final('x') })), 'the provider returned a Promise, not an Observable of stream events'],
    ['returns undefined', () => undefined, 'the provider returned undefined, not an Observable of stream events'],
    ['emits null', () => of({ type: 'start', partial: partial() }, null), 'event 1 is null'],
    ['emits garbage', () => of({ type: 'start', partial: partial() }, { choices: [{ delta: 'hi' }] }), 'event 1 has unknown type undefined'],
    ['sends a delta without a partial message', () => of({ type: 'textDelta', contentIndex: 0, delta: 'Hel' }), 'event 0 (textDelta) has no partial assistant message'],
  ])('%s: one clean lifecycle, an error naming the breach, not retried', async (_what, provider, breach) => {
    const { all, calls } = await runWith(provider);
    expect(calls).toBe(1);
    const life = lifecycle(all);
    expect(life.starts).toBe(1);
    expect(life.ends).toBe(1);
    expect(life.after).toEqual(['TurnEnd', 'AgentEnd']);
    expect(life.message.stopReason).toBe('error');
    expect(life.message.errorMessage).toBe(`other: Provider contract breach: ${breach}`);
    expect(JSON.stringify(all)).not.toMatch(/TypeError|Cannot read/);
    expect(agentEnd(all).stopReason).toBe('error');
  });

  it('two done events, a delta after done, and a stream that never completes: the run completes on the first done', async () => {
    const p = partial();
    const { all } = await runWith(() =>
      concat(
        of(
          { type: 'start', partial: p },
          { type: 'textDelta', contentIndex: 0, delta: 'Hello', partial: p },
          { type: 'done', message: final('Hello') },
          { type: 'done', message: final('Hello again') },
          { type: 'textDelta', contentIndex: 0, delta: ' late', partial: p },
        ),
        NEVER,
      ),
    );
    const life = lifecycle(all);
    expect(life).toMatchObject({ starts: 1, ends: 1, after: ['TurnEnd', 'AgentEnd'] });
    expect(textOf(life.message)).toBe('Hello');
    expect(all.filter((e) => e.type === 'MessageUpdate').map((e) => (e as { delta: { delta: string } }).delta.delta)).toEqual(['Hello']);
    expect(agentEnd(all).stopReason).toBe('stop');
  });
});
