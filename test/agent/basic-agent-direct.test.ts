import { describe, expect, it } from 'vitest';
import { map, type OperatorFunction } from 'rxjs';
import { AgentError, BasicAgent, type AgentEvent } from '../../src/index.js';
import { scriptedModel, scriptedProvider, type ScriptStep } from '../../src/testing/index.js';
import { addTool, testScheduler } from './helpers.js';

// A BasicAgent follows its runs straight from the loop (no Observable between them) unless an
// operator of the user's needs the run as an Observable (`operators.events`, `tracing`). Both ways
// must be the same run: these tests set one against the other, in virtual time.

const script: ScriptStep[] = [
  { text: 'Let me add', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 }, id: 'c1' }], chunkDelay: 2 },
  { text: 'It is 3.', chunkDelay: 2 },
];

/** An operator of the user's that changes nothing, but makes the agent take the run as an Observable. */
const same: OperatorFunction<AgentEvent, AgentEvent> = (events$) => events$.pipe(map((e) => e));

function agentFor(steps: ScriptStep[], viaObservable: boolean): BasicAgent {
  let n = 0;
  return new BasicAgent({
    model: scriptedModel(),
    provider: scriptedProvider(steps),
    tools: [addTool],
    retry: false,
    ids: () => `id${++n}`,
    ...(viaObservable ? { operators: { events: same } } : {}),
  });
}

describe('BasicAgent: a run followed straight from the loop is the run its Observable is', () => {
  it('the same events in the same order, the same conversation and view state', () => {
    testScheduler().run(({ flush }) => {
      const direct = agentFor(script, false);
      const observed = agentFor(script, true);
      const a: AgentEvent[] = [];
      const b: AgentEvent[] = [];
      let ends = 0;
      direct.prompt('add 1 and 2').subscribe({ next: (e) => a.push(e), complete: () => ends++ });
      observed.prompt('add 1 and 2').subscribe({ next: (e) => b.push(e), complete: () => ends++ });
      flush();
      expect(ends).toBe(2);
      expect(a.length).toBeGreaterThan(10);
      expect(a).toEqual(b);
      expect(direct.messages).toEqual(observed.messages);
      expect(direct.state).toEqual(observed.state);
      expect(direct.isStreaming).toBe(false);
    });
  });

  it('unsubscribing mid-run cancels it the same way: no event after, the agent idle, no further model call', () => {
    testScheduler().run(({ cold, flush }) => {
      const runs = [false, true].map((viaObservable) => {
        const provider = scriptedProvider(script);
        let n = 0;
        const agent = new BasicAgent({
          model: scriptedModel(), provider, tools: [addTool], retry: false, ids: () => `id${++n}`,
          ...(viaObservable ? { operators: { events: same } } : {}),
        });
        const seen: AgentEvent[] = [];
        const subscription = agent.prompt('add 1 and 2').subscribe((e) => seen.push(e));
        cold('5ms a').subscribe(() => subscription.unsubscribe());
        return { agent, provider, seen };
      });
      flush();
      const [direct, observed] = runs;
      expect(direct!.seen.length).toBeGreaterThan(2);
      expect(direct!.seen).toEqual(observed!.seen);
      expect(direct!.seen.some((e) => e.type === 'AgentEnd')).toBe(false);
      for (const { agent, provider } of runs) {
        expect(agent.isStreaming).toBe(false);
        expect(provider.requests).toHaveLength(1);
      }
    });
  });

  it('a run refused before it starts fails the same way, and the agent can run again', async () => {
    for (const viaObservable of [false, true]) {
      const agent = agentFor([{ text: 'fine' }], viaObservable);
      const refused = new Promise<unknown>((resolve) => agent.continue().subscribe({ error: resolve }));
      const error = await refused;
      expect(error).toBeInstanceOf(AgentError);
      expect((error as AgentError).code).toBe('InvalidContinue');
      expect(agent.isStreaming).toBe(false);
      expect(await agent.run('again')).toBe('fine');
    }
  });
});
