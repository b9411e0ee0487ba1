import { describe, expect, it } from 'vitest';
import { lastValueFrom, map, type Observable, tap, timer, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { z } from 'zod';
import { agentLoopParallel, agentLoopParallelResult, parallelResult, type AgentLoopParallelOptions, type ParallelResult } from '../../src/parallel/agent-loop-parallel.js';
import { Evaluation, type LlmJudgeOptions } from '../../src/parallel/evaluation.js';
import type { Evaluator } from '../../src/parallel/evaluate-parallel.js';
import { agentLoop, agentLoopContinue } from '../../src/loop/agent-loop.js';
import type { AgentContext, AgentLoopConfig } from '../../src/loop/config.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { MessageQueue } from '../../src/sources/queues.js';
import { estimateContextTokens } from '../../src/context/tokens.js';
import { recordSession } from '../../src/operators/record-session.js';
import { SessionRecorder } from '../../src/session/recorder.js';
import { parallelSiblings } from '../../src/session/queries.js';
import { describeEvent, scriptedModel, scriptedProvider, type ScriptedProvider, type ScriptStep } from '../../src/testing/index.js';
import type { AgentEvent, EventOf } from '../../src/types/events.js';
import { type AgentMessage, type AssistantMessage, textOf, userMessage } from '../../src/types/message.js';
import { AgentError, ProviderError } from '../../src/types/errors.js';

// ---- fixtures -----------------------------------------------------------------------------------

const SESSION = 's';

function base(messages: AgentMessage[] = []): AgentContext {
  return { systemPrompt: 'You are a test.', messages, tools: [], agentId: 'agent-1', sessionId: SESSION };
}

type Config = AgentLoopConfig & { provider: ScriptedProvider };

/** A branch config whose loop ids read `s.{id}.1`. */
function branch(id: string, script: ScriptStep[], extra: Partial<Omit<AgentLoopConfig, 'provider'>> = {}): Config {
  return { model: scriptedModel(), configId: id, provider: scriptedProvider(script), retry: false, ...extra };
}

function judgeWith(script: ScriptStep[], extra: Partial<LlmJudgeOptions> = {}, contextConfig?: AgentLoopConfig['contextConfig']) {
  const provider = scriptedProvider(script);
  const strategy = Evaluation.LlmJudge({ judge: { model: scriptedModel('judge-model'), provider, retry: false, ...(contextConfig ? { contextConfig } : {}) }, ...extra });
  return { provider, strategy };
}

const prompt = [userMessage('Which prime comes after 7?', 0)];

async function collect(run$: Observable<AgentEvent>): Promise<{ events: AgentEvent[]; result: ParallelResult }> {
  const events: AgentEvent[] = [];
  const result = await lastValueFrom(run$.pipe(tap((e) => events.push(e)), parallelResult()));
  return { events, result };
}

const short = (loopId: string): string => loopId.split('.')[1]!;

/** `frame Type@branch` for every event but MessageUpdate, in virtual time. */
function timedTrace(run: (ts: TestScheduler) => Observable<AgentEvent>): { trace: string[]; error?: unknown } {
  const ts = new TestScheduler((a, e) => expect(a).toEqual(e));
  const trace: string[] = [];
  let error: unknown;
  ts.run(({ flush }) => {
    run(ts).subscribe({
      next: (e) => {
        if (e.type === 'MessageUpdate') return;
        trace.push(`${ts.now()} ${describeEvent(e)}${'loopId' in e ? `@${short(e.loopId)}` : ''}`);
      },
      error: (e: unknown) => (error = e),
    });
    flush();
  });
  return { trace, error };
}

const ofType = <T extends AgentEvent['type']>(events: AgentEvent[], type: T): EventOf<T>[] => events.filter((e): e is EventOf<T> => e.type === type);

// ---- the event sequence ---------------------------------------------------------------------------

describe('agentLoopParallel: events', () => {
  it('announces the branches in config order, runs them on one session, and ends with the selection', async () => {
    const { events, result } = await collect(
      agentLoopParallel(prompt, base(), [branch('a', [{ text: '11' }]), branch('b', [{ text: 'eleven' }]), branch('c', [{ text: '11!' }])], Evaluation.PickFirst),
    );
    expect(events[0]).toEqual({ type: 'ParallelLoopStart', sessionId: SESSION, loopIds: ['s.a.1', 's.b.1', 's.c.1'], timestamp: expect.any(Number) });
    expect(events.at(-1)).toEqual({
      type: 'ParallelLoopEnd', sessionId: SESSION, selectedLoopId: 's.a.1', selectedConfigIndex: 0, evaluationUsage: expect.objectContaining({ totalTokens: 0 }), timestamp: expect.any(Number),
    });
    const starts = ofType(events, 'AgentStart');
    expect(starts.map((e) => [e.loopId, e.sessionId, e.agentId])).toEqual([
      ['s.a.1', SESSION, 'agent-1'], ['s.b.1', SESSION, 'agent-1'], ['s.c.1', SESSION, 'agent-1'],
    ]);
    // Every branch event is attributable: its loopId is one of the announced ones, and each loop ends once.
    const inner = events.slice(1, -1);
    expect(inner.every((e) => 'loopId' in e && ['s.a.1', 's.b.1', 's.c.1'].includes(e.loopId))).toBe(true);
    expect(ofType(events, 'AgentEnd').map((e) => e.loopId).sort()).toEqual(['s.a.1', 's.b.1', 's.c.1']);
    expect(result.outcomes.map((o) => [o.loopId, o.configIndex, o.stopReason, o.failed])).toEqual([
      ['s.a.1', 0, 'stop', false], ['s.b.1', 1, 'stop', false], ['s.c.1', 2, 'stop', false],
    ]);
    expect(textOf(result.selected.messages.at(-1) as AssistantMessage)).toBe('11');
  });

  it('interleaves the branches as they happen (virtual time), each event under its own loopId', () => {
    const { trace } = timedTrace(() =>
      agentLoopParallel(prompt, base(), [branch('a', [{ text: 'slow', delay: 10, chunkDelay: 1 }]), branch('b', [{ text: 'fast', delay: 3, chunkDelay: 1 }])], Evaluation.PickFirst),
    );
    expect(trace).toEqual([
      '0 ParallelLoopStart',
      '0 AgentStart@a', '0 TurnStart:0@a', '0 MessageStart:user@a', '0 MessageEnd:user@a',
      '0 AgentStart@b', '0 TurnStart:0@b', '0 MessageStart:user@b', '0 MessageEnd:user@b',
      '3 MessageStart:assistant@b', '5 MessageEnd:assistant@b', '5 TurnEnd@b', '5 AgentEnd:stop@b',
      '10 MessageStart:assistant@a', '12 MessageEnd:assistant@a', '12 TurnEnd@a', '12 AgentEnd:stop@a',
      '12 ParallelLoopEnd',
    ]);
  });

  it('runs at most `concurrency` branches at once', () => {
    const { trace } = timedTrace(() =>
      agentLoopParallel(prompt, base(), [branch('a', [{ text: 'x', delay: 4 }]), branch('b', [{ text: 'y', delay: 4 }])], Evaluation.PickFirst, { concurrency: 1 }),
    );
    expect(trace.filter((t) => t.includes('Agent'))).toEqual(['0 AgentStart@a', '4 AgentEnd:stop@a', '4 AgentStart@b', '8 AgentEnd:stop@b']);
  });

  it('gives each branch its own deep copy of the base messages and prompts, and shares the tools', async () => {
    const history = [userMessage('Remember: the answer is 42.', 0)];
    const calls: string[] = [];
    const note = defineTool({ name: 'note', description: 'Notes', parameters: z.object({}), execute: () => { calls.push('note'); return 'ok'; } });
    const context = { ...base(history), tools: [note] };
    // Branch a rewrites its context in place; b must not see it.
    const vandal = (messages: AgentMessage[]): AgentMessage[] => {
      for (const m of messages) if (m.role === 'user') (m.content[0] as { text: string }).text = 'vandalized';
      return messages;
    };
    const a = branch('a', [{ toolCalls: [{ name: 'note' }] }, { text: 'done a' }], { transformContext: vandal });
    const b = branch('b', [{ toolCalls: [{ name: 'note' }] }, { text: 'done b' }]);
    const { result } = await collect(agentLoopParallel(prompt, context, [a, b], Evaluation.PickFirst));
    expect(textOf(a.provider.requests[0]!.messages[0]!)).toBe('vandalized');
    expect(b.provider.requests[0]!.messages.map((m) => textOf(m))).toEqual(['Remember: the answer is 42.', 'Which prime comes after 7?']);
    expect(history[0]!.content).toEqual([{ type: 'text', text: 'Remember: the answer is 42.' }]);
    expect(prompt[0]!.content).toEqual([{ type: 'text', text: 'Which prime comes after 7?' }]);
    expect(calls).toEqual(['note', 'note']);
    expect(result.originalContextLen).toBe(1);
  });

  it('with no prompts, each branch continues the base context (agentLoopContinue)', async () => {
    const history = [userMessage('Earlier question', 0), userMessage('Name a colour.', 1)];
    const a = branch('a', [{ text: 'red' }]);
    const b = branch('b', [{ text: 'blue' }]);
    const { events, result } = await collect(agentLoopParallel([], base(history), [a, b], Evaluation.Elaborate));
    expect(ofType(events, 'TurnStart').map((e) => e.triggeredBy)).toEqual(['continuation', 'continuation']);
    expect(a.provider.requests[0]!.messages.map((m) => textOf(m))).toEqual(['Earlier question', 'Name a colour.']);
    expect(result.originalContextLen).toBe(2);
    expect(result.outcomes.map((o) => o.messages.map((m) => m.role))).toEqual([['assistant'], ['assistant']]);
  });

  it('returns the selected context, ready to continue the conversation from the winner', async () => {
    const history = [userMessage('Hello', 0)];
    const { result } = await collect(
      agentLoopParallel(prompt, base(history), [branch('a', [{ text: 'short', usage: { totalTokens: 5 } }]), branch('b', [{ text: 'long', usage: { totalTokens: 50 } }])], Evaluation.Elaborate),
    );
    expect(result.selectedIndex).toBe(1);
    const ctx = result.selectedContext;
    expect(ctx).toMatchObject({ agentId: 'agent-1', sessionId: SESSION, parentLoopId: 's.b.1', systemPrompt: 'You are a test.' });
    expect(ctx.messages.map((m) => (m.role === 'extension' ? '' : textOf(m)))).toEqual(['Hello', 'Which prime comes after 7?', 'long']);
    expect(ctx.messages.slice(0, result.originalContextLen)).toEqual(history);

    // agentLoopContinue accepts it (here with a queued follow-up, since it ends with the answer).
    const followUp = new MessageQueue();
    followUp.push(userMessage('Go on.', 2));
    const next = branch('n', [{ text: 'continuing' }], { followUp });
    const continued = await lastValueFrom(agentLoopContinue(ctx, next).pipe(toArray()));
    expect(ofType(continued, 'AgentStart')[0]).toMatchObject({ sessionId: SESSION, agentId: 'agent-1', parentLoopId: 's.b.1' });
    expect(next.provider.requests[0]!.messages.map((m) => textOf(m))).toEqual(['Hello', 'Which prime comes after 7?', 'long', 'Go on.']);
  });

  it('numbers loops per config segment, or as the caller says', async () => {
    const same = (): Config => ({ ...branch('x', [{ text: 'ok' }]), configId: undefined });
    const first = await collect(agentLoopParallel(prompt, base(), [same(), same()], Evaluation.PickFirst));
    expect(first.events[0]).toMatchObject({ loopIds: ['s.scripted-scripted-model.1', 's.scripted-scripted-model.2'] });
    let n = 4;
    const second = await collect(agentLoopParallel(prompt, base(), [same(), same()], Evaluation.PickFirst, { nextLoopNumber: () => ++n }));
    expect(second.events[0]).toMatchObject({ loopIds: ['s.scripted-scripted-model.5', 's.scripted-scripted-model.6'] });
    const explicit = await collect(agentLoopParallel(prompt, base(), [same(), same()], Evaluation.PickFirst, { loopIds: ['s.p.1', 's.q.1'] }));
    expect(explicit.result.outcomes.map((o) => o.loopId)).toEqual(['s.p.1', 's.q.1']);
  });

  it('gives a run without ids a fresh sessionId and agentId shared by all branches', async () => {
    let k = 0;
    const { events } = await collect(
      agentLoopParallel(prompt, { systemPrompt: '', messages: [], tools: [] }, [branch('a', [{ text: '1' }]), branch('b', [{ text: '2' }])], Evaluation.PickFirst, { ids: () => `id${++k}` }),
    );
    expect(events[0]).toMatchObject({ sessionId: 'id2', loopIds: ['id2.a.1', 'id2.b.1'] });
    expect(new Set(ofType(events, 'AgentStart').map((e) => `${e.agentId}/${e.sessionId}`))).toEqual(new Set(['id1/id2']));
  });
});

// ---- misuse ---------------------------------------------------------------------------------------

describe('agentLoopParallel: misuse fails before any branch runs', () => {
  const failure = async (run$: Observable<AgentEvent>): Promise<{ error: AgentError; events: AgentEvent[] }> => {
    const events: AgentEvent[] = [];
    const error = await lastValueFrom(run$.pipe(tap((e) => events.push(e)))).then(
      () => { throw new Error('expected an error'); },
      (e: unknown) => e as AgentError,
    );
    return { error, events };
  };

  it('Transparent with several branches is a StrategyError, and no provider is called', async () => {
    const a = branch('a', [{ text: '1' }]);
    const b = branch('b', [{ text: '2' }]);
    const { error, events } = await failure(agentLoopParallel(prompt, base(), [a, b], Evaluation.Transparent));
    expect(error).toBeInstanceOf(AgentError);
    expect(error.code).toBe('StrategyError');
    expect(events).toEqual([]);
    expect(a.provider.requests.length + b.provider.requests.length).toBe(0);
  });

  it('Transparent with one branch passes it through', async () => {
    const { result } = await collect(agentLoopParallel(prompt, base(), [branch('a', [{ text: '1' }])], Evaluation.Transparent));
    expect(result.selectedIndex).toBe(0);
  });

  it('no configs, or two branches with one loop id, is an InvalidConfig error', async () => {
    expect((await failure(agentLoopParallel(prompt, base(), [], Evaluation.PickFirst))).error.code).toBe('InvalidConfig');
    const dup = await failure(agentLoopParallel(prompt, base(), [branch('a', []), branch('a', [])], Evaluation.PickFirst, { nextLoopNumber: () => 1 }));
    expect(dup.error.code).toBe('InvalidConfig');
    expect(dup.error.message).toMatch(/"s\.a\.1" is used by more than one branch/);
  });
});

// ---- failure, abort, race -------------------------------------------------------------------------

describe('agentLoopParallel: failures and cancellation', () => {
  it('a branch that ends in error does not cancel its siblings, and the strategy sees it as failed', () => {
    const { trace } = timedTrace(() =>
      agentLoopParallel(
        prompt,
        base(),
        [branch('a', [{ error: ProviderError.auth('bad key'), delay: 2 }]), branch('b', [{ text: 'fine', delay: 6 }])],
        Evaluation.PickFirst,
      ),
    );
    expect(trace.filter((t) => t.includes('Agent') || t.includes('Parallel'))).toEqual([
      '0 ParallelLoopStart', '0 AgentStart@a', '0 AgentStart@b', '2 AgentEnd:error@a', '6 AgentEnd:stop@b', '6 ParallelLoopEnd',
    ]);
  });

  it('reports the failed branch in the result', async () => {
    const { result } = await collect(
      agentLoopParallel(prompt, base(), [branch('a', [{ error: ProviderError.auth('bad key') }]), branch('b', [{ text: 'fine' }])], Evaluation.PickFirst),
    );
    expect(result.selectedIndex).toBe(1);
    expect(result.outcomes[0]).toMatchObject({ failed: true, stopReason: 'error', cancelled: false });
    expect((result.outcomes[0]!.messages.at(-1) as AssistantMessage).errorMessage).toMatch(/auth: bad key/);
  });

  it('a branch whose Observable errors is a failed outcome with the error; its siblings go on', async () => {
    const boom = new Error('exploded');
    const explode = map((e: AgentEvent) => {
      if (e.type === 'TurnStart') throw boom;
      return e;
    });
    const { events, result } = await collect(
      agentLoopParallel(prompt, base(), [branch('a', [{ text: 'never' }], { operators: { events: explode } }), branch('b', [{ text: 'fine' }])], Evaluation.PickFirst),
    );
    expect(result.outcomes[0]).toMatchObject({ failed: true, error: boom, stopReason: 'error', messages: [] });
    expect(result.selected.loopId).toBe('s.b.1');
    expect(ofType(events, 'AgentEnd').map((e) => e.loopId)).toEqual(['s.b.1']);
  });

  it('when every branch errors before ending there is nothing to select: the first error is the run\'s', async () => {
    // Continuing a context that ends with an answer and has nothing queued is a misuse in every branch.
    const done = [userMessage('q', 0), { role: 'assistant', content: [{ type: 'text', text: 'a' }], stopReason: 'stop', model: 'm', provider: 'p', usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 }, timestamp: 1 } as AgentMessage];
    const events: AgentEvent[] = [];
    const error = await lastValueFrom(agentLoopParallel([], base(done), [branch('a', []), branch('b', [])], Evaluation.PickFirst).pipe(tap((e) => events.push(e)))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).code).toBe('InvalidContinue');
    expect(events.map((e) => e.type)).toEqual(['ParallelLoopStart']);
  });

  it('aborting the run aborts every branch gracefully, and the judge is not asked', () => {
    const controller = new AbortController();
    const judge = judgeWith([{ text: '1' }]);
    const { trace } = timedTrace((ts) => {
      ts.schedule(() => controller.abort(), 4);
      return agentLoopParallel(prompt, base(), [branch('a', [{ text: 'x', delay: 10 }]), branch('b', [{ text: 'y', delay: 10 }])], judge.strategy, { signal: controller.signal });
    });
    expect(trace.filter((t) => t.includes('AgentEnd') || t.includes('Parallel') || t.includes('Progress'))).toEqual([
      '0 ParallelLoopStart', '4 AgentEnd:aborted@a', '4 AgentEnd:aborted@b', '4 ProgressMessage@a', '4 ParallelLoopEnd',
    ]);
    expect(judge.provider.requests).toHaveLength(0);
  });

  it('after an abort, branches that had finished are still candidates; the judge is skipped with a warning', async () => {
    const controller = new AbortController();
    const judge = judgeWith([{ text: '2' }]);
    const ts = new TestScheduler((a, e) => expect(a).toEqual(e));
    let events: AgentEvent[] = [];
    ts.run(({ flush }) => {
      ts.schedule(() => controller.abort(), 4);
      agentLoopParallel(prompt, base(), [branch('a', [{ text: 'slow', delay: 10 }]), branch('b', [{ text: 'quick', delay: 1 }]), branch('c', [{ text: 'quick too', delay: 2 }])], judge.strategy, { signal: controller.signal })
        .pipe(toArray())
        .subscribe((all) => (events = all));
      flush();
    });
    expect(judge.provider.requests).toHaveLength(0);
    expect(ofType(events, 'ParallelLoopEnd')[0]).toMatchObject({ selectedConfigIndex: 1 });
    expect(ofType(events, 'ProgressMessage')[0]!.text).toMatch(/aborted, so the judge was not asked/);
  });

  it('aborting while the judge decides selects the first successful branch with a warning', async () => {
    const controller = new AbortController();
    const judge = judgeWith([{ text: '2', delay: 10 }]);
    const ts = new TestScheduler((a, e) => expect(a).toEqual(e));
    let events: AgentEvent[] = [];
    ts.run(({ flush }) => {
      ts.schedule(() => controller.abort(), 5);
      agentLoopParallel(prompt, base(), [branch('a', [{ text: 'one' }]), branch('b', [{ text: 'two' }])], judge.strategy, { signal: controller.signal })
        .pipe(toArray())
        .subscribe((all) => (events = all));
      flush();
    });
    expect(judge.provider.requests).toHaveLength(1);
    expect(ofType(events, 'ParallelLoopEnd')[0]).toMatchObject({ selectedConfigIndex: 0, timestamp: 5 });
    expect(ofType(events, 'ProgressMessage')[0]!.text).toMatch(/aborted while the judge was deciding/);
  });

  it('unsubscribing tears every branch down: no further events', () => {
    const a = branch('a', [{ text: 'x', delay: 10 }]);
    const ts = new TestScheduler((x, y) => expect(x).toEqual(y));
    const seen: string[] = [];
    ts.run(({ flush }) => {
      const sub = agentLoopParallel(prompt, base(), [a, branch('b', [{ text: 'y', delay: 10 }])], Evaluation.PickFirst).subscribe((e) => seen.push(`${ts.now()} ${e.type}`));
      ts.schedule(() => sub.unsubscribe(), 3);
      flush();
    });
    expect(seen.every((s) => s.startsWith('0 '))).toBe(true);
    expect(seen).not.toContain('0 AgentEnd');
  });

  it('race (FirstToFinish): the first branch to succeed wins and the others are aborted, still ending with AgentEnd', () => {
    const c = branch('c', [{ text: 'slowest', delay: 20 }]);
    const { trace } = timedTrace(() =>
      agentLoopParallel(prompt, base(), [branch('a', [{ text: 'slow', delay: 10 }]), branch('b', [{ text: 'fast', delay: 3 }]), c], Evaluation.FirstToFinish),
    );
    expect(trace.filter((t) => t.includes('AgentEnd') || t.includes('Parallel'))).toEqual([
      '0 ParallelLoopStart', '3 AgentEnd:stop@b', '3 AgentEnd:aborted@a', '3 AgentEnd:aborted@c', '3 ParallelLoopEnd',
    ]);
    // Nothing happens after the race is decided: the losers' provider streams were cancelled.
    expect(trace.at(-1)).toBe('3 ParallelLoopEnd');
    expect(c.provider.requests).toHaveLength(1);
  });

  it('race: the outcomes say who was cancelled; a branch that fails does not win', async () => {
    const ts = new TestScheduler((x, y) => expect(x).toEqual(y));
    let result: ParallelResult | undefined;
    ts.run(({ flush }) => {
      agentLoopParallel(
        prompt,
        base(),
        [branch('a', [{ text: 'slow', delay: 10 }]), branch('b', [{ error: ProviderError.auth('no'), delay: 3 }]), branch('c', [{ text: 'slowest', delay: 20 }])],
        Evaluation.FirstToFinish,
      ).pipe(parallelResult()).subscribe((r) => (result = r));
      flush();
    });
    expect(result!.selectedIndex).toBe(0);
    expect(result!.outcomes.map((o) => [o.stopReason, o.failed, o.cancelled, o.finishOrder])).toEqual([
      ['stop', false, false, 1], ['error', true, false, 0], ['aborted', true, true, 2],
    ]);
  });
});

// ---- LlmJudge ----------------------------------------------------------------------------------------

describe('agentLoopParallel with LlmJudge', () => {
  const three = (): Config[] => [branch('a', [{ text: 'Eleven.' }]), branch('b', [{ text: '11 is the next prime.' }]), branch('c', [{ text: 'Nine.' }])];

  it('reply "2" selects index 1; the judge sees the query, the prior context and every output', async () => {
    const judge = judgeWith([{ text: '2', usage: { input: 120, output: 1 } }]);
    const history = [userMessage('We are doing number theory.', 0)];
    const { events, result } = await collect(agentLoopParallel(prompt, base(history), three(), judge.strategy));
    expect(ofType(events, 'AgentStart')).toHaveLength(3);
    expect(result.selectedIndex).toBe(1);
    expect(events.at(-1)).toMatchObject({ type: 'ParallelLoopEnd', selectedLoopId: 's.b.1', selectedConfigIndex: 1, evaluationUsage: { input: 120, output: 1, totalTokens: 121 } });
    expect(result.evaluationUsage.totalTokens).toBe(121);
    const request = judge.provider.requests[0]!;
    expect(request.model.id).toBe('judge-model');
    expect(request.tools).toEqual([]);
    expect(request.systemPrompt).toMatch(/impartial judge/);
    const text = textOf(request.messages[0]!);
    expect(text).toContain('We are doing number theory.');
    expect(text).toContain('<user_query>\nUser: Which prime comes after 7?\n</user_query>');
    expect(text).toContain('<response number="1">\nAssistant: Eleven.\n</response>');
    expect(text).toContain('<response number="2">\nAssistant: 11 is the next prime.\n</response>');
    expect(text).toContain('<response number="3">\nAssistant: Nine.\n</response>');
  });

  it('in continue mode the query is the last user message of the base context', async () => {
    const judge = judgeWith([{ text: '1' }]);
    const history = [userMessage('Context first.', 0), userMessage('Which prime comes after 7?', 1)];
    await collect(agentLoopParallel([], base(history), three(), judge.strategy));
    const text = textOf(judge.provider.requests[0]!.messages[0]!);
    expect(text).toContain('<prior_conversation>\nUser: Context first.\n</prior_conversation>');
    expect(text).toContain('<user_query>\nUser: Which prime comes after 7?\n</user_query>');
  });

  it('numbers only the successful branches, and maps the reply back to the config index', async () => {
    const judge = judgeWith([{ text: '2' }]);
    const configs = [branch('a', [{ error: ProviderError.auth('no') }]), branch('b', [{ text: 'B' }]), branch('c', [{ text: 'C' }])];
    const { result } = await collect(agentLoopParallel(prompt, base(), configs, judge.strategy));
    expect(result.selectedIndex).toBe(2);
    expect(textOf(judge.provider.requests[0]!.messages[0]!)).toMatch(/Judge 2 candidate responses/);
  });

  it('a garbage reply is asked again once: garbage then "1" selects index 0, and both calls count', async () => {
    const judge = judgeWith([{ text: 'They are all lovely.', usage: { input: 100, output: 5 } }, { text: 'Response 1.', usage: { input: 130, output: 2 } }]);
    const { events, result } = await collect(agentLoopParallel(prompt, base(), three(), judge.strategy));
    expect(result.selectedIndex).toBe(0);
    expect(result.evaluationUsage).toMatchObject({ input: 230, output: 7, totalTokens: 237 });
    expect(ofType(events, 'ProgressMessage')).toEqual([]);
    const retry = judge.provider.requests[1]!.messages;
    expect(retry.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(textOf(retry[2]!)).toMatch(/does not name one response\. Reply with a single number from 1 to 3/);
  });

  it('garbage twice is a StrategyError by default — never a silent pick', async () => {
    const judge = judgeWith([{ text: 'hmm' }, { text: 'either 1 or 3' }]);
    const error = await agentLoopParallelResult(prompt, base(), three(), judge.strategy).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).code).toBe('StrategyError');
    expect((error as AgentError).message).toMatch(/did not name one response \(1-3\) in 2 attempts; last reply: "either 1 or 3"/);
  });

  it('garbage twice with a declared fallback selects it and warns before ParallelLoopEnd', async () => {
    const judge = judgeWith([{ text: 'hmm' }, { text: 'no idea' }], { onUndecided: { fallbackIndex: 2 } });
    const { events, result } = await collect(agentLoopParallel(prompt, base(), three(), judge.strategy));
    expect(result.selectedIndex).toBe(2);
    const warning = events.at(-2)!;
    expect(warning).toMatchObject({ type: 'ProgressMessage', loopId: 's.c.1', toolName: 'evaluateParallel', toolCallId: '' });
    expect((warning as EventOf<'ProgressMessage'>).text).toMatch(/^LlmJudge: the judge's reply did not name one response .* selected the declared fallback branch 2$/);
    expect(result.warnings).toEqual([(warning as EventOf<'ProgressMessage'>).text]);
  });

  it('a failing judge call is a StrategyError, or the declared fallback', async () => {
    const failing = judgeWith([{ error: ProviderError.api('overloaded', { status: 500 }) }]);
    const error = await agentLoopParallelResult(prompt, base(), three(), failing.strategy).catch((e: unknown) => e);
    expect((error as AgentError).code).toBe('StrategyError');
    expect((error as AgentError).message).toMatch(/the judge call failed \(overloaded\)/);
    const lenient = judgeWith([{ error: ProviderError.api('overloaded', { status: 500 }) }], { onUndecided: { fallbackIndex: 1 } });
    const result = await agentLoopParallelResult(prompt, base(), three(), lenient.strategy);
    expect(result.selectedIndex).toBe(1);
    expect(result.warnings[0]).toMatch(/judge call failed/);
  });

  it('with a single successful branch the judge is not called', async () => {
    const judge = judgeWith([]);
    const configs = [branch('a', [{ error: ProviderError.auth('no') }]), branch('b', [{ text: 'B' }])];
    const { result } = await collect(agentLoopParallel(prompt, base(), configs, judge.strategy));
    expect(result.selectedIndex).toBe(1);
    expect(judge.provider.requests).toHaveLength(0);
  });

  describe('fits its prompt to the judge budget', () => {
    const budget = { maxContextTokens: 3_000, systemPromptTokens: 500, toolOutputMaxLines: 10 };
    const paragraph = (i: number): string => `Message ${i}: ${'lorem ipsum dolor sit amet '.repeat(20)}\n\nSecond paragraph of ${i}.`;
    const longHistory = (): AgentMessage[] =>
      Array.from({ length: 120 }, (_, i) =>
        i % 2 === 0 ? userMessage(paragraph(i), i) : ({ role: 'assistant', content: [{ type: 'text', text: paragraph(i) }], stopReason: 'stop', model: 'm', provider: 'p', usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 }, timestamp: i } as AgentMessage),
      );

    it('iteration 1: a long prior context is compacted and the outputs stay intact', async () => {
      const judge = judgeWith([{ text: '3' }], {}, budget);
      const history = longHistory();
      expect(estimateContextTokens(history)).toBeGreaterThan(10_000);
      const { events, result } = await collect(agentLoopParallel(prompt, base(history), three(), judge.strategy));
      const request = judge.provider.requests[0]!;
      expect(estimateContextTokens(request.messages)).toBeLessThanOrEqual(2_500);
      const text = textOf(request.messages[0]!);
      for (const answer of ['Eleven.', '11 is the next prime.', 'Nine.']) expect(text).toContain(`Assistant: ${answer}\n</response>`);
      expect(text).toContain('Which prime comes after 7?');
      expect(text).toContain('Message 0:'); // the head of the conversation is kept
      expect(text).toContain('Message 119:'); // and its most recent turn
      expect(result.selectedIndex).toBe(2);
      expect(ofType(events, 'ProgressMessage')).toEqual([]);
    });

    it('iteration 2: long outputs are compacted too, each through the tiers, without a warning when that suffices', async () => {
      const dump = defineTool({ name: 'dump', description: 'Dumps', parameters: z.object({}), execute: () => Array.from({ length: 2_000 }, (_, i) => `line ${i} of the dump`).join('\n') });
      const judge = judgeWith([{ text: '1' }], {}, budget);
      const configs = ['a', 'b'].map((id) => branch(id, [{ toolCalls: [{ name: 'dump' }] }, { text: `final answer ${id}` }]));
      const { events } = await collect(agentLoopParallel(prompt, { ...base(longHistory()), tools: [dump] }, configs, judge.strategy));
      const request = judge.provider.requests[0]!;
      expect(estimateContextTokens(request.messages)).toBeLessThanOrEqual(2_500);
      const text = textOf(request.messages[0]!);
      expect(text).toContain('final answer a');
      expect(text).toContain('final answer b');
      expect(text).toMatch(/Tool result \(dump\): line 0 of the dump[\s\S]*lines truncated/);
      expect(ofType(events, 'ProgressMessage')).toEqual([]);
    });

    it('beyond that, every section is cut to its share and a warning says so', async () => {
      const judge = judgeWith([{ text: '2' }], {}, budget);
      const configs = ['a', 'b', 'c'].map((id) => branch(id, [{ text: `${id}: ${'a very long answer '.repeat(2_000)}` }]));
      const { events, result } = await collect(agentLoopParallel(prompt, base(longHistory()), configs, judge.strategy));
      const request = judge.provider.requests[0]!;
      expect(estimateContextTokens(request.messages)).toBeLessThanOrEqual(2_500);
      const text = textOf(request.messages[0]!);
      for (const id of ['a', 'b', 'c']) expect(text).toContain(`Assistant: ${id}: a very long answer`);
      expect(text).toContain('[... cut to fit the judge budget ...]');
      expect(result.selectedIndex).toBe(1);
      const warnings = ofType(events, 'ProgressMessage');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.text).toMatch(/did not fit the judge's budget of 2500 tokens/);
    });
  });
});

// ---- custom strategies and the session ------------------------------------------------------------

describe('agentLoopParallel with custom strategies and a session recorder', () => {
  it('a function strategy sees every outcome with the conversation', async () => {
    let seen: Parameters<Extract<Evaluator, (...args: never[]) => unknown>>[0] | undefined;
    const longest: Evaluator = (input) => {
      seen = input;
      const lengths = input.outcomes.map((o) => textOf(o.messages.at(-1) as AssistantMessage).length);
      return lengths.indexOf(Math.max(...lengths));
    };
    const { result } = await collect(agentLoopParallel(prompt, base([userMessage('hi', 0)]), [branch('a', [{ text: 'ab' }]), branch('b', [{ text: 'abcd' }])], longest));
    expect(result.selectedIndex).toBe(1);
    expect(result.strategy).toBe('longest');
    expect(seen).toMatchObject({ sessionId: SESSION, prompts: prompt, originalContextLen: 1, systemPrompt: 'You are a test.' });
  });

  it('an Observable strategy runs in virtual time and its usage lands on ParallelLoopEnd', () => {
    const { trace } = timedTrace(() =>
      agentLoopParallel(prompt, base(), [branch('a', [{ text: 'x' }]), branch('b', [{ text: 'y' }])], {
        name: 'Slow',
        evaluate: (_input, { scheduler }) => timer(7, scheduler).pipe(map(() => ({ index: 1 }))),
      }),
    );
    expect(trace.at(-1)).toBe('7 ParallelLoopEnd');
  });

  it('the session recorder marks the group: all loop ids, the winner selected, siblings findable', async () => {
    const recorder = new SessionRecorder();
    const judge = judgeWith([{ text: 'nope' }, { text: 'nope' }], { onUndecided: { fallbackIndex: 1 } });
    await lastValueFrom(agentLoopParallel(prompt, base(), [branch('a', [{ text: 'A' }]), branch('b', [{ text: 'B' }]), branch('c', [{ text: 'C' }])], judge.strategy).pipe(recordSession(recorder), parallelResult()));
    const session = recorder.getSession(SESSION)!;
    expect(session.loops.map((l) => l.loopId)).toEqual(['s.a.1', 's.b.1', 's.c.1']);
    for (const loop of session.loops) {
      expect(loop.parallelGroup).toMatchObject({ allLoopIds: ['s.a.1', 's.b.1', 's.c.1'], selectedLoopId: 's.b.1', selectedConfigIndex: 1, isSelected: loop.loopId === 's.b.1' });
    }
    expect(parallelSiblings(session, 's.b.1').map((l) => l.loopId)).toEqual(['s.a.1', 's.c.1']);
    expect(recorder.warnings).toBe(0);
  });
});

describe('parallelResult', () => {
  it('fails clearly on a ParallelLoopEnd that was copied, and on a stream without one', async () => {
    const copied = agentLoopParallel(prompt, base(), [branch('a', [{ text: 'x' }])], Evaluation.PickFirst).pipe(map((e) => structuredClone(e)), parallelResult());
    await expect(lastValueFrom(copied)).rejects.toThrow(/carries no result/);
    await expect(lastValueFrom(agentLoop(prompt, base(), branch('a', [{ text: 'x' }])).pipe(parallelResult()))).rejects.toThrow(/without a ParallelLoopEnd/);
  });

  it('agentLoopParallelResult resolves with the result', async () => {
    const options: AgentLoopParallelOptions = {};
    const result = await agentLoopParallelResult(prompt, base(), [branch('a', [{ text: 'x', usage: { totalTokens: 9 } }]), branch('b', [{ text: 'y', usage: { totalTokens: 3 } }])], Evaluation.TokenEfficient, options);
    expect(result.selected.loopId).toBe('s.b.1');
  });
});
