import { describe, expect, it } from 'vitest';
import { asyncScheduler, finalize, lastValueFrom, map, NEVER, Observable, of, timer, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { runTool, type RunToolOptions, type ToolRunEmission, TOOL_TEXTS } from '../../src/sources/tool-run.js';
import { ToolError } from '../../src/types/errors.js';
import { type AnyTool, toolProgress, toolUpdate, type ToolContext, type ToolExecution, type ToolResult } from '../../src/types/tool.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

function tool(execute: (args: unknown, ctx: ToolContext) => ToolExecution, name = 't'): AnyTool {
  return { name, label: name, description: name, parameters: { type: 'object' }, execute };
}

const text = (t: string): ToolResult => ({ content: [{ type: 'text', text: t }] });
const result = (t: string, isError = false): ToolRunEmission => ({ kind: 'result', result: text(t), isError });
const options = (over: Partial<RunToolOptions> = {}): RunToolOptions => ({ toolCallId: 'c1', loopId: 'l', scheduler: asyncScheduler, ...over });

const collect = (t: AnyTool, args: unknown = {}, over: Partial<RunToolOptions> = {}): Promise<ToolRunEmission[]> =>
  lastValueFrom(runTool(t, args, options(over)).pipe(toArray()));

describe('runTool', () => {
  it.each([
    ['a plain string', () => 'hi'],
    ['a ToolResult', () => text('hi')],
    ['a Promise of a string', () => Promise.resolve('hi')],
    ['a Promise of a ToolResult', async () => text('hi')],
    ['an Observable ending in a string', () => of('hi')],
  ])('accepts %s and emits exactly one result', async (_kind, execute) => {
    expect(await collect(tool(execute as () => ToolExecution))).toEqual([result('hi')]);
  });

  it('passes the arguments and a context naming the call', async () => {
    let seen: [unknown, Omit<ToolContext, 'onUpdate' | 'onProgress' | 'signal' | 'scheduler'>] | undefined;
    await collect(tool((args, ctx) => ((seen = [args, { toolCallId: ctx.toolCallId, toolName: ctx.toolName, loopId: ctx.loopId }]), 'ok'), 'reader'), { path: 'a' });
    expect(seen).toEqual([{ path: 'a' }, { toolCallId: 'c1', toolName: 'reader', loopId: 'l' }]);
  });

  it('streams an Observable’s updates and progress in order, then its result', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const t = tool(() => cold('-u-p-r|', { u: toolUpdate('partial'), p: toolProgress('50%'), r: text('final') }));
      expectObservable(runTool(t, {}, options())).toBe('-u-p--(r|)', {
        u: { kind: 'update', partial: text('partial') },
        p: { kind: 'progress', text: '50%' },
        r: result('final'),
      });
    });
  });

  it('keeps a result the tool marks isError as an error', async () => {
    expect(await collect(tool(() => ({ ...text('bad input'), isError: true })))).toEqual([
      { kind: 'result', result: { ...text('bad input'), isError: true }, isError: true },
    ]);
  });

  it('turns an Observable that completes without a result into an error result saying so', async () => {
    expect(await collect(tool(() => of(toolProgress('x')), 'quiet'))).toEqual([
      { kind: 'progress', text: 'x' },
      result('Tool "quiet" finished without a result.', true),
    ]);
  });

  it('turns a throw, a rejection and an Observable error into error results, never an Observable error', async () => {
    const boom = (): never => {
      throw new Error('boom');
    };
    expect(await collect(tool(boom, 'x'))).toEqual([result('Tool "x" failed: boom', true)]);
    expect(await collect(tool(() => Promise.reject(new Error('boom')), 'x'))).toEqual([result('Tool "x" failed: boom', true)]);
    expect(await collect(tool(() => new Observable<string>((s) => s.error(new Error('boom'))), 'x'))).toEqual([result('Tool "x" failed: boom', true)]);
    expect(await collect(tool(() => Promise.reject('plain string'), 'x'))).toEqual([result('Tool "x" failed: plain string', true)]);
  });

  it('reports a ToolError of kind invalidArgs as invalid arguments', async () => {
    const picky = tool(() => {
      throw ToolError.invalidArgs('path must be relative');
    }, 'read');
    expect(await collect(picky)).toEqual([result('Invalid arguments for tool "read": path must be relative', true)]);
  });

  it('times out on the given scheduler, aborting the tool’s signal with a timeout ToolError', () => {
    let signal: AbortSignal | undefined;
    scheduler().run(({ expectObservable }) => {
      const t = tool((_a, ctx) => ((signal = ctx.signal), timer(100, ctx.scheduler).pipe(map(() => 'late'))), 'slow');
      expectObservable(runTool(t, {}, options({ timeoutMs: 30 }))).toBe('30ms (r|)', { r: result('Tool "slow" timed out after 30ms.', true) });
    });
    expect(signal!.aborted).toBe(true);
    expect(signal!.reason).toBeInstanceOf(ToolError);
    expect((signal!.reason as ToolError).kind).toBe('timeout');
  });

  it('finishes normally when the tool beats its timeout', () => {
    scheduler().run(({ expectObservable }) => {
      const t = tool((_a, ctx) => timer(10, ctx.scheduler).pipe(map(() => 'fast')));
      expectObservable(runTool(t, {}, options({ timeoutMs: 30 }))).toBe('10ms (r|)', { r: result('fast') });
    });
  });

  it('is cut short by interrupt$ with the steering text, and aborts the tool’s signal', () => {
    let signal: AbortSignal | undefined;
    scheduler().run(({ hot, expectObservable }) => {
      const t = tool((_a, ctx) => ((signal = ctx.signal), NEVER));
      expectObservable(runTool(t, {}, options({ interrupt$: hot('---i') }))).toBe('---(r|)', { r: result(TOOL_TEXTS.interrupted, true) });
    });
    expect(signal!.aborted).toBe(true);
  });

  it('is cut short through watchInterrupt and watchCancel, and stops both watches when it ends', () => {
    const watching = new Set<string>();
    const cuts: Record<string, (reason?: string) => void> = {};
    const watch = (name: string) => (cut: (reason?: string) => void) => {
      watching.add(name);
      cuts[name] = cut;
      return () => watching.delete(name);
    };
    let signal: AbortSignal | undefined;
    const t = tool((_a, ctx) => ((signal = ctx.signal), NEVER));
    const seen: ToolRunEmission[] = [];
    runTool(t, {}, options({ watchInterrupt: watch('interrupt'), watchCancel: watch('cancel') })).subscribe((e) => seen.push(e));
    expect([...watching]).toEqual(['interrupt', 'cancel']);
    cuts.cancel!('user said stop');
    expect(seen).toEqual([result('Tool call cancelled: user said stop', true)]);
    expect(signal!.aborted).toBe(true);
    expect(watching.size).toBe(0);
    cuts.interrupt!(); // after the end: nothing more
    expect(seen).toHaveLength(1);
  });

  it('a watchInterrupt that cuts at once (steering already queued) ends the call without running the tool', async () => {
    let ran = false;
    const stopped: string[] = [];
    const out = await collect(tool(() => ((ran = true), 'ran')), {}, {
      watchInterrupt: (cut) => (cut(), () => stopped.push('interrupt')),
      watchCancel: () => () => stopped.push('cancel'),
    });
    expect(out).toEqual([result(TOOL_TEXTS.interrupted, true)]);
    expect(ran).toBe(false);
    expect(stopped).toEqual(['interrupt']); // the cancel watch was never started
  });

  it('is cut short when the run’s signal aborts: "Tool execution aborted."', () => {
    const controller = new AbortController();
    let signal: AbortSignal | undefined;
    scheduler().run(({ expectObservable }) => {
      const t = tool((_a, ctx) => ((signal = ctx.signal), NEVER));
      timer(8).subscribe(() => controller.abort());
      expectObservable(runTool(t, {}, options({ signal: controller.signal }))).toBe('8ms (r|)', { r: result(TOOL_TEXTS.aborted, true) });
    });
    expect(signal!.aborted).toBe(true);
  });

  it('passes the run’s abort reason on to the tool’s signal', async () => {
    const controller = new AbortController();
    let signal: AbortSignal | undefined;
    const out = lastValueFrom(runTool(tool((_a, ctx) => ((signal = ctx.signal), NEVER)), {}, options({ signal: controller.signal })).pipe(toArray()));
    const reason = new Error('user pressed stop');
    controller.abort(reason);
    expect(await out).toEqual([result(TOOL_TEXTS.aborted, true)]);
    expect(signal!.reason).toBe(reason);
  });

  it('answers at once when the run’s signal is already aborted, without running the tool', async () => {
    const controller = new AbortController();
    controller.abort();
    let ran = false;
    const out = await collect(tool(() => ((ran = true), NEVER)), {}, { signal: controller.signal });
    expect(out).toEqual([result(TOOL_TEXTS.aborted, true)]);
    expect(ran).toBe(false);
  });

  it('unsubscribing aborts the tool’s signal and unsubscribes its Observable', () => {
    let signal: AbortSignal | undefined;
    let torndown = false;
    scheduler().run(({ expectObservable }) => {
      const t = tool((_a, ctx) => ((signal = ctx.signal), NEVER.pipe(finalize(() => (torndown = true)))));
      expectObservable(runTool(t, {}, options()), '^ 5ms !').toBe('');
    });
    expect(signal!.aborted).toBe(true);
    expect(torndown).toBe(true);
  });

  it('does not abort the signal of a tool that finished', async () => {
    let signal: AbortSignal | undefined;
    await collect(tool((_a, ctx) => ((signal = ctx.signal), 'done')));
    expect(signal!.aborted).toBe(false);
  });

  it('unlinks from the run’s signal once finished: aborting later does not reach the tool', async () => {
    const controller = new AbortController();
    let signal: AbortSignal | undefined;
    await collect(tool((_a, ctx) => ((signal = ctx.signal), 'done')), {}, { signal: controller.signal });
    controller.abort();
    expect(signal!.aborted).toBe(false);
  });

  it('gives one signal per call, the same on every read', async () => {
    const seen: AbortSignal[] = [];
    await collect(tool((_a, ctx) => (seen.push(ctx.signal, ctx.signal), 'done')));
    expect(seen[0]).toBeInstanceOf(AbortSignal);
    expect(seen[1]).toBe(seen[0]);
  });

  it('a signal first read after the call was unsubscribed is already aborted', async () => {
    let ctx: ToolContext | undefined;
    const sub = runTool(tool((_a, c) => ((ctx = c), new Promise<string>(() => undefined))), {}, options()).subscribe();
    sub.unsubscribe();
    expect(ctx!.signal.aborted).toBe(true);
    expect((ctx!.signal.reason as ToolError).kind).toBe('cancelled');
  });

  it('a signal first read after a timeout is already aborted with the timeout', () => {
    let ctx: ToolContext | undefined;
    scheduler().run(({ expectObservable }) => {
      const t = tool((_a, c) => ((ctx = c), NEVER), 'slow');
      expectObservable(runTool(t, {}, options({ timeoutMs: 5 }))).toBe('5ms (r|)', { r: result('Tool "slow" timed out after 5ms.', true) });
    });
    expect(ctx!.signal.aborted).toBe(true);
    expect((ctx!.signal.reason as ToolError).kind).toBe('timeout');
  });

  it('lets a tool hand ctx.onUpdate around unbound', () => {
    scheduler().run(({ expectObservable }) => {
      const t = tool((_a, { onUpdate, onProgress, scheduler: s }) => {
        timer(1, s).subscribe(() => onUpdate('half'));
        timer(2, s).subscribe(() => onProgress('almost'));
        return timer(3, s).pipe(map(() => 'done'));
      });
      expectObservable(runTool(t, {}, options())).toBe('-up(r|)', {
        u: { kind: 'update', partial: text('half') },
        p: { kind: 'progress', text: 'almost' },
        r: result('done'),
      });
    });
  });

  it('ignores ctx.onUpdate / onProgress calls after the result', async () => {
    let late: ToolContext | undefined;
    const out = await collect(tool((_a, ctx) => ((late = ctx), 'done')));
    late!.onUpdate('too late');
    late!.onProgress('too late');
    expect(out).toEqual([result('done')]);
  });

  it('streams ctx.onUpdate and ctx.onProgress as they are called', () => {
    scheduler().run(({ expectObservable }) => {
      const t = tool((_a, ctx) => {
        timer(2, ctx.scheduler).subscribe(() => ctx.onUpdate('half'));
        timer(4, ctx.scheduler).subscribe(() => ctx.onProgress('almost'));
        return timer(6, ctx.scheduler).pipe(map(() => 'done'));
      });
      expectObservable(runTool(t, {}, options())).toBe('--u-p-(r|)', {
        u: { kind: 'update', partial: text('half') },
        p: { kind: 'progress', text: 'almost' },
        r: result('done'),
      });
    });
  });
});
