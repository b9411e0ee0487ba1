import { describe, expect, it } from 'vitest';
import { filter, map, type Observable, type OperatorFunction, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { requestApproval, isApprovalVerdict, type ApprovalAnswer, type ApprovalVerdict } from '../../src/operators/request-approval.js';
import { dispatchTools } from '../../src/operators/dispatch-tools.js';
import type { ToolCallCancel } from '../../src/operators/internal/call-cancellations.js';
import type { ToolCall } from '../../src/types/content.js';
import type { AgentEvent } from '../../src/types/events.js';
import type { AnyTool, ToolContext } from '../../src/types/tool.js';

const loopId = 'sess.cfg.1';
const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const call = (id: string, args: Record<string, unknown> = {}): ToolCall => ({ type: 'toolCall', id, name: `tool_${id}`, arguments: args });

/** V: requested, v: resolved; then the verdict: A approved, D denied, X aborted, C cancelled. */
const letters = (): OperatorFunction<AgentEvent | ApprovalVerdict, string> =>
  map((out) => {
    if (!isApprovalVerdict(out)) return out.type === 'ToolApprovalRequested' ? 'V' : out.type === 'ToolApprovalResolved' ? 'v' : 'H';
    return { approved: 'A', denied: 'D', aborted: 'X', cancelled: 'C' }[out.outcome];
  });

describe('requestApproval (marbles)', () => {
  it('waits per call for its answer; calls are independent and answers for other ids are ignored', () => {
    scheduler().run(({ cold, hot, expectObservable }) => {
      const answers = hot<ApprovalAnswer>('-z---b---a', {
        z: { toolCallId: 'zz', approved: true },
        a: { toolCallId: 'a', approved: true },
        b: { toolCallId: 'b', approved: false, reason: 'no' },
      });
      const calls = cold<ToolCall>('a-b|', { a: call('a'), b: call('b') });
      expectObservable(calls.pipe(requestApproval({ loopId, answers }), letters())).toBe('V-V--(vD)(vA|)');
    });
  });

  it('decide may answer later (an Observable); undefined leaves the call to the answers stream', () => {
    scheduler().run(({ cold, hot, expectObservable }) => {
      const answers = hot<ApprovalAnswer>('----------b', { b: { toolCallId: 'b', approved: true, args: { x: 2 } } });
      const decide = (r: { toolCallId: string }): Observable<{ approved: boolean }> | undefined =>
        r.toolCallId === 'a' ? cold('-----y|', { y: { approved: true } }) : undefined;
      const out = cold<ToolCall>('(ab|)', { a: call('a'), b: call('b') }).pipe(requestApproval({ loopId, decide, answers, allowEdits: true }));
      expectObservable(out.pipe(letters())).toBe('(VV)-(vA)-(vA|)');
      expectObservable(out.pipe(filter(isApprovalVerdict), map((v) => (v.outcome === 'approved' ? v.args : null)))).toBe('-----x----(y|)', { x: {}, y: { x: 2 } });
    });
  });

  it('an abort of the run ends every wait; a cancellation ends its call only', () => {
    scheduler().run(({ cold, hot, expectObservable }) => {
      const controller = new AbortController();
      timer(10).subscribe(() => controller.abort());
      const cancels = hot<string>('-----b');
      const out = cold<ToolCall>('(ab|)', { a: call('a'), b: call('b') }).pipe(
        requestApproval({ loopId, answers: hot<ApprovalAnswer>('-'), signal: controller.signal, cancelOf: (id) => cancels.pipe(filter((c) => c === id), map(() => 'stop')) }),
      );
      expectObservable(out.pipe(letters())).toBe('(VV)-(vC)-(vX|)');
    });
  });

  it('an answer given synchronously as the request goes out is not missed', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const out = cold<ToolCall>('(a|)', { a: call('a') }).pipe(requestApproval({ loopId, decide: () => ({ approved: false }) }));
      expectObservable(out.pipe(letters())).toBe('(VvD|)');
    });
  });
});

describe('dispatchTools with approval and cancellation (marbles)', () => {
  const slow = (name: string, ms: number, extra: Partial<AnyTool> = {}): AnyTool => ({
    name, label: name, description: name, parameters: { type: 'object' }, ...extra,
    execute: (_args: unknown, ctx: ToolContext) => timer(ms, ctx.scheduler).pipe(map(() => `${name} done`)),
  });
  const trace = (): OperatorFunction<AgentEvent, string> =>
    map((e) => {
      if (e.type === 'ToolExecutionEnd') return `${e.toolCallId}${e.isError ? 'x' : '.'}`;
      if (e.type === 'ToolApprovalRequested') return `?${e.toolCallId}`;
      if (e.type === 'ToolApprovalResolved') return `=${e.toolCallId}`;
      return e.type === 'ToolExecutionStart' ? `>${e.toolCallId}` : '';
    });

  it('parallel: the call waiting for approval does not hold up the others; cancel cuts one running call', () => {
    scheduler().run(({ cold, hot, expectObservable }) => {
      const tools = [slow('gated', 4, { needsApproval: true }), slow('long', 20), slow('short', 8)];
      const answers = hot<ApprovalAnswer>('----------g', { g: { toolCallId: 'g', approved: true } });
      const cancels = hot<ToolCallCancel>('------l', { l: { toolCallId: 'l', reason: 'enough' } });
      const calls = cold<ToolCall>('(gls|)', {
        g: { type: 'toolCall', id: 'g', name: 'gated', arguments: {} },
        l: { type: 'toolCall', id: 'l', name: 'long', arguments: {} },
        s: { type: 'toolCall', id: 's', name: 'short', arguments: {} },
      });
      const out = calls.pipe(dispatchTools({ tools, loopId, approval: { answers }, cancel$: cancels }), trace(), filter((t) => t !== ''));
      // g waits; l and s start at 0; l is cancelled at 6; s ends at 8; g is approved at 10, starts, ends at 14.
      expectObservable(out).toBe('(abc)-d-e-(fg)(h|)', { a: '?g', b: '>l', c: '>s', d: 'lx', e: 's.', f: '=g', g: '>g', h: 'g.' });
    });
  });
});
