import { describe, expect, it } from 'vitest';
import { ExecutionTracker } from '../../src/context/execution.js';
import { Usage } from '../../src/types/usage.js';

const usage = (over: Partial<Usage>): Usage => ({ ...Usage.empty(), ...over });

describe('ExecutionTracker', () => {
  it('says nothing while every limit holds, and nothing at all without limits', () => {
    const tracker = new ExecutionTracker({ maxTurns: 3, maxTotalTokens: 1_000, maxDurationMs: 10_000 }, 0);
    tracker.recordTurn(usage({ totalTokens: 100 }));
    expect(tracker.exceeded(5_000)).toBeUndefined();
    const unlimited = new ExecutionTracker({}, 0);
    for (let i = 0; i < 100; i++) unlimited.recordTurn(usage({ totalTokens: 1_000_000 }));
    expect(unlimited.exceeded(Number.MAX_SAFE_INTEGER)).toBeUndefined();
  });

  it('stops at maxTurns with phi-core’s text', () => {
    const tracker = new ExecutionTracker({ maxTurns: 2 }, 0);
    tracker.recordTurn(Usage.empty());
    expect(tracker.exceeded(0)).toBeUndefined();
    tracker.recordTurn(Usage.empty());
    expect(tracker.exceeded(0)).toBe('Max turns reached (2/2)');
  });

  it('counts totalTokens, or the parts when a provider reports no total', () => {
    const tracker = new ExecutionTracker({ maxTotalTokens: 1_000 }, 0);
    tracker.recordTurn(usage({ totalTokens: 600, input: 999_999 }));
    expect(tracker.exceeded(0)).toBeUndefined();
    tracker.recordTurn(usage({ input: 300, output: 150 }));
    expect(tracker.exceeded(0)).toBe('Max tokens reached (1050/1000)');
  });

  it('prices turns with the model’s rates and stops at maxCost', () => {
    const tracker = new ExecutionTracker({ maxCost: 0.5 }, 0, { input: 3, output: 15 });
    const turn = usage({ input: 100_000, output: 10_000 }); // $0.30 + $0.15
    tracker.recordTurn(turn);
    expect(tracker.cost).toBeCloseTo(0.45, 10);
    expect(tracker.exceeded(0)).toBeUndefined();
    tracker.recordTurn(turn);
    expect(tracker.exceeded(0)).toBe('Max cost reached ($0.9000/$0.5000)');
  });

  it('does not enforce maxCost without pricing: the cost stays 0', () => {
    const tracker = new ExecutionTracker({ maxCost: 0.000_001 }, 0);
    tracker.recordTurn(usage({ input: 1_000_000, output: 1_000_000 }));
    expect(tracker.exceeded(0)).toBeUndefined();
  });

  it('measures duration from its start time on the clock it is given', () => {
    const tracker = new ExecutionTracker({ maxDurationMs: 3_000 }, 1_000);
    expect(tracker.exceeded(3_999)).toBeUndefined();
    expect(tracker.exceeded(4_000)).toBe('Max duration reached (3s/3s)');
  });

  it('reports turns before tokens when both are over', () => {
    const tracker = new ExecutionTracker({ maxTurns: 1, maxTotalTokens: 1 }, 0);
    tracker.recordTurn(usage({ totalTokens: 10 }));
    expect(tracker.exceeded(0)).toBe('Max turns reached (1/1)');
  });
});
