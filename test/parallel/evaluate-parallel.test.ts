import { describe, expect, it } from 'vitest';
import { lastValueFrom, map, NEVER, of, timer, EMPTY, throwError } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { evaluateParallel, type ParallelOutcome, type ParallelOutcomes } from '../../src/parallel/evaluate-parallel.js';
import { Evaluation } from '../../src/parallel/evaluation.js';
import { AgentError } from '../../src/types/errors.js';
import { Usage } from '../../src/types/usage.js';

function scheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

interface Spec {
  tokens?: number;
  failed?: boolean;
  finishOrder?: number;
}

/** Outcomes of a parallel run, one per spec, with loop ids s.b0, s.b1 ... */
function outcomes(...specs: Spec[]): ParallelOutcomes {
  const list: ParallelOutcome[] = specs.map((s, i) => ({
    loopId: `s.b${i}`,
    configIndex: i,
    messages: [],
    usage: { ...Usage.empty(), totalTokens: s.tokens ?? 10 },
    stopReason: s.failed ? 'error' : 'stop',
    failed: s.failed ?? false,
    finishOrder: s.finishOrder ?? i,
    cancelled: false,
  }));
  return { sessionId: 's', systemPrompt: '', prompts: [], baseMessages: [], originalContextLen: 0, outcomes: list };
}

const pick = (i: number) => ({ selectedIndex: i, selectedLoopId: `s.b${i}`, usage: Usage.empty(), warnings: [] });

describe('evaluateParallel', () => {
  it('decides each input as it arrives with a synchronous strategy', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold('-a--b|', { a: outcomes({ tokens: 30 }, { tokens: 20 }), b: outcomes({ tokens: 5 }, { tokens: 20 }) });
      expectObservable(source.pipe(evaluateParallel(Evaluation.TokenEfficient))).toBe('-x--y|', {
        x: { ...pick(1), strategy: 'TokenEfficient' },
        y: { ...pick(0), strategy: 'TokenEfficient' },
      });
    });
  });

  it('waits for an Observable strategy and keeps the inputs in order (concatMap)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold('-ab|', { a: outcomes({}, {}), b: outcomes({}, {}, {}) });
      // The strategy answers "the last branch" three frames after it is asked.
      const slow = (input: ParallelOutcomes) => timer(3).pipe(map(() => input.outcomes.length - 1));
      expectObservable(source.pipe(evaluateParallel(slow))).toBe('----x--(y|)', {
        x: { ...pick(1), strategy: 'slow' },
        y: { ...pick(2), strategy: 'slow' },
      });
    });
  });

  it('takes the first value of an Observable strategy and unsubscribes from it', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const answers = cold('--a--b', { a: 0, b: 1 });
      const source = cold('a|', { a: outcomes({}, {}) });
      expectObservable(source.pipe(evaluateParallel(() => answers))).toBe('--(x|)', { x: { ...pick(0), strategy: 'custom' } });
      expectSubscriptions(answers.subscriptions).toBe('^-!');
    });
  });

  it('accepts a Promise strategy', async () => {
    const decision = await lastValueFrom(of(outcomes({}, {}, {})).pipe(evaluateParallel(async () => ({ index: 2 }))));
    expect(decision.selectedIndex).toBe(2);
    expect(decision.selectedLoopId).toBe('s.b2');
  });

  it('turns warnings into ProgressMessage events on the selected loop, stamped with scheduler time, and passes usage on', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const usage = { ...Usage.empty(), input: 7, output: 1, totalTokens: 8 };
      const strategy = { name: 'Careful', evaluate: () => ({ index: 1, usage, warnings: ['not sure'] }) };
      const source = cold('--a|', { a: outcomes({}, {}) });
      expectObservable(source.pipe(evaluateParallel(strategy))).toBe('--x|', {
        x: {
          selectedIndex: 1,
          selectedLoopId: 's.b1',
          usage,
          strategy: 'Careful',
          warnings: [{ type: 'ProgressMessage', loopId: 's.b1', toolCallId: '', toolName: 'evaluateParallel', text: 'Careful: not sure', timestamp: 2 }],
        },
      });
    });
  });

  describe('fails with a StrategyError', () => {
    const errorOf = (input: ParallelOutcomes, strategy: Parameters<typeof evaluateParallel>[0]): unknown => {
      let caught: unknown;
      of(input).pipe(evaluateParallel(strategy)).subscribe({ error: (e: unknown) => (caught = e) });
      return caught;
    };

    it('when the strategy selects an index that is not a branch', () => {
      scheduler().run(({ cold, expectObservable }) => {
        const source = cold('-a|', { a: outcomes({}, {}) });
        const error = new AgentError('StrategyError', 'Evaluation strategy "custom" could not decide: it selected branch 2, but there are 2 branches (indexes 0-1).');
        expectObservable(source.pipe(evaluateParallel(() => 2))).toBe('-#', undefined, error);
      });
    });

    it('when the strategy throws or errors, keeping the cause', () => {
      const boom = new Error('boom');
      const thrown = errorOf(outcomes({}), function judgeByVibes() {
        throw boom;
      });
      expect(thrown).toBeInstanceOf(AgentError);
      expect((thrown as AgentError).code).toBe('StrategyError');
      expect((thrown as AgentError).message).toBe('Evaluation strategy "judgeByVibes" could not decide: it failed: boom.');
      expect((thrown as AgentError).cause).toBe(boom);
      const errored = errorOf(outcomes({}), () => throwError(() => boom)) as AgentError;
      expect(errored.code).toBe('StrategyError');
    });

    it('when an Observable strategy completes without a verdict', () => {
      const error = errorOf(outcomes({}), () => EMPTY) as AgentError;
      expect(error.code).toBe('StrategyError');
      expect(error.message).toMatch(/completed without selecting a branch/);
    });

    it('when there are no outcomes', () => {
      expect((errorOf(outcomes(), Evaluation.PickFirst) as AgentError).message).toMatch(/no branches/);
    });

    it('Transparent with more than one branch (an error, not a crash)', () => {
      const error = errorOf(outcomes({}, {}), Evaluation.Transparent) as AgentError;
      expect(error.code).toBe('StrategyError');
      expect(error.message).toMatch(/passes exactly one branch through, but 2 were given/);
    });

    it('passes an AgentError from the strategy through unchanged', () => {
      const own = new AgentError('StrategyError', 'mine');
      expect(errorOf(outcomes({}), () => throwError(() => own))).toBe(own);
    });
  });

  it('unsubscribing stops a pending strategy', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const answer = cold('-----a', { a: 0 });
      expectObservable(of(outcomes({})).pipe(evaluateParallel(() => answer)), '--!').toBe('---');
      expectSubscriptions(answer.subscriptions).toBe('^-!');
    });
  });
});

describe('built-in strategies', () => {
  const decide = async (strategy: Parameters<typeof evaluateParallel>[0], input: ParallelOutcomes) =>
    lastValueFrom(of(input).pipe(evaluateParallel(strategy)));

  it('Transparent passes its single branch through', async () => {
    expect((await decide(Evaluation.Transparent, outcomes({ failed: true }))).selectedIndex).toBe(0);
  });

  it('PickFirst selects the first branch that did not fail', async () => {
    expect((await decide(Evaluation.PickFirst, outcomes({}, {}))).selectedIndex).toBe(0);
    expect((await decide(Evaluation.PickFirst, outcomes({ failed: true }, {}, {}))).selectedIndex).toBe(1);
  });

  it('TokenEfficient selects the fewest total tokens among successful branches; ties go to the lower index', async () => {
    expect((await decide(Evaluation.TokenEfficient, outcomes({ tokens: 50 }, { tokens: 3, failed: true }, { tokens: 20 }, { tokens: 20 }))).selectedIndex).toBe(2);
  });

  it('Elaborate selects the most total tokens among successful branches', async () => {
    expect((await decide(Evaluation.Elaborate, outcomes({ tokens: 50 }, { tokens: 90, failed: true }, { tokens: 70 }))).selectedIndex).toBe(2);
  });

  it('FirstToFinish selects the successful branch that finished first', async () => {
    expect((await decide(Evaluation.FirstToFinish, outcomes({ finishOrder: 2 }, { finishOrder: 0, failed: true }, { finishOrder: 1 }))).selectedIndex).toBe(2);
  });

  it('when every branch failed, selects branch 0 and says why in a warning', async () => {
    for (const strategy of [Evaluation.PickFirst, Evaluation.TokenEfficient, Evaluation.Elaborate, Evaluation.FirstToFinish]) {
      const decision = await decide(strategy, outcomes({ failed: true }, { failed: true }));
      expect(decision.selectedIndex).toBe(0);
      expect(decision.warnings).toHaveLength(1);
      expect(decision.warnings[0]!.text).toMatch(/all 2 branches failed \(0: error; 1: error\); selected branch 0/);
    }
  });
});
