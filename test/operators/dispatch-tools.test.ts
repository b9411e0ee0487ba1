import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  defer, filter, finalize, from, lastValueFrom, map, NEVER, Observable, type OperatorFunction, of, Subject, throwError, timer, toArray,
} from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { dispatchTools, type DispatchToolsOptions, type SteeringCheck } from '../../src/operators/dispatch-tools.js';
import { TOOL_TEXTS } from '../../src/sources/tool-run.js';
import { defineTool } from '../../src/tools/define-tool.js';
import type { ToolCall } from '../../src/types/content.js';
import type { AgentEvent, EventOf } from '../../src/types/events.js';
import type { SteeringPolicy } from '../../src/types/config.js';
import type { AgentMessage, ToolResultMessage } from '../../src/types/message.js';
import { userMessage } from '../../src/types/message.js';
import { type AnyTool, toolProgress, toolUpdate, type ToolContext, type ToolExecution } from '../../src/types/tool.js';

const loopId = 'sess.cfg.1';
const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

// ---- kit ----------------------------------------------------------------------------------------

/** What the tools saw: when each started (virtual ms), with which arguments, and their signals. */
interface Log {
  started: Array<[string, number]>;
  args: Record<string, unknown>;
  signals: Record<string, AbortSignal>;
  torndown: string[];
}
const newLog = (): Log => ({ started: [], args: {}, signals: {}, torndown: [] });

function tool(name: string, execute: (args: Record<string, unknown>, ctx: ToolContext) => ToolExecution, extra: Partial<AnyTool> = {}): AnyTool {
  return { name, label: name, description: `the ${name} tool`, parameters: { type: 'object' }, execute, ...extra };
}

/** A tool that answers "<name> done" after `ms` virtual milliseconds, logging what it saw. */
function slow(name: string, ms: number, log: Log, extra: Partial<AnyTool> = {}): AnyTool {
  return tool(
    name,
    (args, ctx) => {
      log.started.push([name, ctx.scheduler.now()]);
      log.args[name] = args;
      log.signals[name] = ctx.signal;
      return timer(ms, ctx.scheduler).pipe(
        map(() => `${name} done`),
        finalize(() => log.torndown.push(name)),
      );
    },
    extra,
  );
}

let callIds = 0;
const call = (name: string, args: Record<string, unknown> = {}, id = `${name}-${++callIds}`): ToolCall => ({ type: 'toolCall', id, name, arguments: args });
const calls = (...names: string[]): ToolCall[] => names.map((n) => call(n, {}, n));

/** Start of tool `a` → "A", its end → "a"; the result messages and anything else are left out. */
const startsAndEnds = (): OperatorFunction<AgentEvent, string> => (events$) =>
  events$.pipe(
    filter((e) => e.type === 'ToolExecutionStart' || e.type === 'ToolExecutionEnd'),
    map((e) => {
      const name = (e as EventOf<'ToolExecutionStart'>).toolName;
      return e.type === 'ToolExecutionStart' ? name.toUpperCase() : name;
    }),
  );

/** A readable line per event: "S:a", "E:a!" (error), "M:a" (result message end), "U:a", "P:a:text", "H:hook:msg". */
function describeEvent(e: AgentEvent): string {
  switch (e.type) {
    case 'ToolExecutionStart': return `S:${e.toolName}`;
    case 'ToolExecutionEnd': return `E:${e.toolName}${e.isError ? '!' : ''}`;
    case 'ToolExecutionUpdate': return `U:${e.toolName}:${resultText(e.partialResult)}`;
    case 'ProgressMessage': return `P:${e.toolName}:${e.text}`;
    case 'MessageStart': return `m:${(e.message as ToolResultMessage).toolName}`;
    case 'MessageEnd': return `M:${(e.message as ToolResultMessage).toolName}`;
    case 'HookError': return `H:${e.hook}:${e.message}`;
    default: return e.type;
  }
}

const resultText = (r: { content: ReadonlyArray<{ type: string; text?: string }> }): string => r.content.map((c) => c.text ?? '').join('');

/** The events, a readable trace, and the result messages by call id. */
function summarize(events: AgentEvent[]) {
  const results = new Map<string, ToolResultMessage>();
  for (const e of events) if (e.type === 'MessageEnd') results.set((e.message as ToolResultMessage).toolCallId, e.message as ToolResultMessage);
  return { events, trace: events.map(describeEvent), results, text: (id: string) => resultText(results.get(id)!) };
}

/** Runs dispatch in virtual time (optionally unsubscribing after `untilFrame` ms) and summarizes what it emitted. */
function dispatch(toolCalls: ToolCall[], options: Omit<DispatchToolsOptions, 'loopId'>, untilFrame?: number) {
  const events: AgentEvent[] = [];
  new TestScheduler((a, b) => expect(a).toEqual(b)).run(({ expectObservable }) => {
    const out$ = from(toolCalls).pipe(dispatchTools({ loopId, ...options }));
    if (untilFrame === undefined) out$.subscribe((e) => events.push(e));
    else expectObservable(out$.pipe(map((e) => (events.push(e), 'e'))), `^ ${untilFrame}ms !`);
  });
  return summarize(events);
}

/** For tools and hooks that answer with real Promises: runs to completion on the real clock (no timers involved). */
async function dispatchAsync(toolCalls: ToolCall[], options: Omit<DispatchToolsOptions, 'loopId'>) {
  return summarize(await lastValueFrom(from(toolCalls).pipe(dispatchTools({ loopId, ...options }), toArray())));
}

/** A steering stub: `pending()` flips to true at `at` (virtual ms), when `arrivals$` fires too. */
function steeringAt(at: number, policy: SteeringPolicy, ts: { schedule: (fn: () => void, delay: number) => void }): SteeringCheck {
  let pending = false;
  const arrivals = new Subject<unknown>();
  ts.schedule(() => {
    pending = true;
    arrivals.next('steer');
  }, at);
  return { pending: () => pending, policy: () => policy, arrivals$: arrivals };
}

/** Schedules on the virtual async scheduler (only valid inside `run`). */
const virtual = { schedule: (fn: () => void, delay: number) => void timer(delay).subscribe(fn) };

/** Like `dispatch`, but builds the options inside the virtual run (for stubs that schedule). */
function dispatchWith(toolCalls: ToolCall[], makeOptions: () => Omit<DispatchToolsOptions, 'loopId'>) {
  const events: AgentEvent[] = [];
  new TestScheduler((a, b) => expect(a).toEqual(b)).run(() => {
    from(toolCalls).pipe(dispatchTools({ loopId, ...makeOptions() })).subscribe((e) => events.push(e));
  });
  return summarize(events);
}

// ---- tests ----------------------------------------------------------------------------------

describe('dispatchTools: the lifecycle of one call', () => {
  it('emits Start, End, then the result message (MessageStart / MessageEnd), timestamped in scheduler time', () => {
    const log = newLog();
    const c = call('a', { path: 'x' }, 'c1');
    const { events } = dispatch([c], { tools: [slow('a', 5, log)] });
    const message: ToolResultMessage = { role: 'toolResult', toolCallId: 'c1', toolName: 'a', content: [{ type: 'text', text: 'a done' }], isError: false, timestamp: 5 };
    expect(events).toEqual([
      { type: 'ToolExecutionStart', loopId, toolCallId: 'c1', toolName: 'a', args: { path: 'x' }, timestamp: 0 },
      { type: 'ToolExecutionEnd', loopId, toolCallId: 'c1', toolName: 'a', result: { content: [{ type: 'text', text: 'a done' }] }, isError: false, timestamp: 5 },
      { type: 'MessageStart', loopId, message, timestamp: 5 },
      { type: 'MessageEnd', loopId, message, timestamp: 5 },
    ]);
    expect(log.args).toEqual({ a: { path: 'x' } });
  });

  it('keeps a tool result’s details and its own isError mark', () => {
    const failing = tool('lint', () => ({ content: [{ type: 'text', text: '3 problems' }], details: { problems: 3 }, isError: true }));
    const { results } = dispatch([call('lint', {}, 'c1')], { tools: [failing] });
    expect(results.get('c1')).toMatchObject({ isError: true, details: { problems: 3 }, content: [{ type: 'text', text: '3 problems' }] });
  });
});

describe('dispatchTools: strategies, proven in virtual time', () => {
  it('parallel (the default) starts every call at frame 0 and takes as long as the longest; Ends come in completion order', () => {
    const log = newLog();
    scheduler().run(({ expectObservable }) => {
      const out$ = from(calls('a', 'b', 'c')).pipe(dispatchTools({ loopId, tools: [slow('a', 30, log), slow('b', 10, log), slow('c', 20, log)] }));
      expectObservable(out$.pipe(startsAndEnds())).toBe('(ABC) 5ms b 9ms c 9ms (a|)');
    });
    expect(log.started).toEqual([['a', 0], ['b', 0], ['c', 0]]);
  });

  it('matches its JSDoc diagram: (ab|) → (SS) 6ms (EMm) 15ms (EMm|)', () => {
    const letter: Partial<Record<AgentEvent['type'], string>> = { ToolExecutionStart: 'S', ToolExecutionEnd: 'E', MessageStart: 'M', MessageEnd: 'm' };
    scheduler().run(({ expectObservable }) => {
      const log = newLog();
      const out$ = from(calls('a', 'b')).pipe(dispatchTools({ loopId, strategy: 'parallel', tools: [slow('a', 30, log), slow('b', 10, log)] }));
      expectObservable(out$.pipe(map((e) => letter[e.type] ?? '?'))).toBe('(SS) 6ms (EMm) 15ms (EMm|)');
    });
  });

  it('sequential runs one call after another: total time is the sum', () => {
    const log = newLog();
    scheduler().run(({ expectObservable }) => {
      const out$ = from(calls('a', 'b', 'c')).pipe(
        dispatchTools({ loopId, strategy: 'sequential', tools: [slow('a', 30, log), slow('b', 10, log), slow('c', 20, log)] }),
      );
      expectObservable(out$.pipe(startsAndEnds())).toBe('A 29ms (aB) 6ms (bC) 16ms (c|)');
    });
    expect(log.started).toEqual([['a', 0], ['b', 30], ['c', 40]]);
  });

  it('batched(2) runs two at a time, the next batch when the whole batch is done', () => {
    const log = newLog();
    scheduler().run(({ expectObservable }) => {
      const out$ = from(calls('a', 'b', 'c')).pipe(
        dispatchTools({ loopId, strategy: { batched: 2 }, tools: [slow('a', 30, log), slow('b', 10, log), slow('c', 20, log)] }),
      );
      expectObservable(out$.pipe(startsAndEnds())).toBe('(AB) 6ms b 19ms (aC) 16ms (c|)');
    });
    expect(log.started).toEqual([['a', 0], ['b', 0], ['c', 30]]);
  });

  it('gives every call exactly one result message, whatever the strategy', () => {
    for (const strategy of ['parallel', 'sequential', { batched: 2 }] as const) {
      const log = newLog();
      const { results, trace } = dispatch(calls('a', 'b', 'c', 'd', 'e'), {
        strategy, tools: ['a', 'b', 'c', 'd', 'e'].map((n, i) => slow(n, 5 * (5 - i), log)),
      });
      expect([...results.keys()].sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
      expect(trace.filter((t) => t.startsWith('M:'))).toHaveLength(5);
    }
  });
});

describe('dispatchTools: failures become isError results the model can read', () => {
  it('unknown tool → "Tool not found: X", with Start and End', () => {
    const { trace, text, results } = dispatch([call('nope', {}, 'c1')], { tools: [] });
    expect(text('c1')).toBe('Tool not found: nope');
    expect(results.get('c1')!.isError).toBe(true);
    expect(trace).toEqual(['S:nope', 'E:nope!', 'm:nope', 'M:nope']);
  });

  it('invalid arguments (zod via defineTool) → an invalid-arguments result; execute is never called', () => {
    let executed = 0;
    const add = defineTool({
      name: 'add', description: 'adds', parameters: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => (executed++, String(a + b)),
    });
    const { text, results } = dispatch([call('add', { a: 1, b: 'two' }, 'c1'), call('add', { a: 1, b: 2 }, 'c2')], { tools: [add] });
    expect(executed).toBe(1);
    expect(text('c1')).toMatch(/^Invalid arguments for tool "add": .*\bb\b/);
    expect(results.get('c1')!.isError).toBe(true);
    expect(text('c2')).toBe('3');
  });

  it.each([
    ['throws', () => { throw new Error('kaput'); }],
    ['returns a rejected Promise', () => Promise.reject(new Error('kaput'))],
    ['errors its Observable', () => throwError(() => new Error('kaput'))],
  ])('a tool that %s → an isError result naming the error, and the others carry on', async (_how, execute) => {
    const { text, results } = await dispatchAsync([call('bad', {}, 'c1'), call('good', {}, 'c2')], {
      tools: [tool('bad', execute as () => ToolExecution), tool('good', () => 'good done')],
    });
    expect(text('c1')).toBe('Tool "bad" failed: kaput');
    expect(results.get('c1')!.isError).toBe(true);
    expect(text('c2')).toBe('good done');
  });

  it('times out with the configured timeout → a "timed out" error result, and the tool’s signal aborts', () => {
    const log = newLog();
    scheduler().run(({ expectObservable }) => {
      const out$ = from(calls('a')).pipe(dispatchTools({ loopId, tools: [slow('a', 100, log)], timeoutMs: 50 }));
      expectObservable(out$.pipe(startsAndEnds())).toBe('A 49ms (a|)');
    });
    expect(log.signals.a!.aborted).toBe(true);
    const { text, results } = dispatch(calls('a'), { tools: [slow('a', 100, newLog())], timeoutMs: 50 });
    expect(text('a')).toBe('Tool "a" timed out after 50ms.');
    expect(results.get('a')!.isError).toBe(true);
  });

  it('a tool’s own timeoutMs beats the configured one', () => {
    const log = newLog();
    scheduler().run(({ expectObservable }) => {
      const tools = [slow('a', 100, log, { timeoutMs: 20 }), slow('b', 100, log)];
      const out$ = from(calls('a', 'b')).pipe(dispatchTools({ loopId, tools, timeoutMs: 50 }));
      expectObservable(out$.pipe(startsAndEnds())).toBe('(AB) 16ms a 29ms (b|)');
    });
    const { text } = dispatch(calls('a'), { tools: [slow('a', 100, newLog(), { timeoutMs: 20 })], timeoutMs: 50 });
    expect(text('a')).toBe('Tool "a" timed out after 20ms.');
  });

  it('defineTool’s timeoutMs is the tool’s own timeout', () => {
    const sleepy = defineTool({ name: 'sleepy', description: 's', parameters: z.object({}), timeoutMs: 5, execute: (_a, ctx) => timer(1_000, ctx.scheduler).pipe(map(() => 'late')) });
    const { text } = dispatch(calls('sleepy'), { tools: [sleepy], timeoutMs: 10_000 });
    expect(text('sleepy')).toBe('Tool "sleepy" timed out after 5ms.');
  });
});

describe('dispatchTools: streaming tools', () => {
  it('surfaces toolUpdate as ToolExecutionUpdate and toolProgress as ProgressMessage, in order', () => {
    const streaming = tool('scan', (_a, ctx) =>
      new Observable((s) => {
        s.next(toolProgress('starting'));
        const t = timer(10, ctx.scheduler).subscribe(() => {
          s.next(toolUpdate('half'));
          s.next(toolProgress('50%'));
          s.next({ content: [{ type: 'text', text: 'all' }] });
          s.complete();
        });
        return () => t.unsubscribe();
      }),
    );
    const { events, trace, text } = dispatch(calls('scan'), { tools: [streaming] });
    expect(trace).toEqual(['S:scan', 'P:scan:starting', 'U:scan:half', 'P:scan:50%', 'E:scan', 'm:scan', 'M:scan']);
    expect(text('scan')).toBe('all');
    expect(events.find((e) => e.type === 'ToolExecutionUpdate')).toMatchObject({ toolCallId: 'scan', timestamp: 10, partialResult: { content: [{ type: 'text', text: 'half' }] } });
  });

  it('ctx.onUpdate and ctx.onProgress work the same from a Promise tool', async () => {
    const pushing = tool('push', async (_a, ctx) => {
      ctx.onProgress('working');
      ctx.onUpdate('partial');
      return 'finished';
    });
    const { trace } = await dispatchAsync(calls('push'), { tools: [pushing] });
    expect(trace).toEqual(['S:push', 'P:push:working', 'U:push:partial', 'E:push', 'm:push', 'M:push']);
  });
});

describe('dispatchTools: hooks', () => {
  it('beforeToolExecution false → "Tool execution skipped by before_tool_execution hook." and NO ToolExecutionStart', () => {
    const log = newLog();
    const { trace, text, results } = dispatch(calls('a', 'b'), {
      tools: [slow('a', 5, log), slow('b', 5, log)],
      hooks: { beforeToolExecution: (name) => name !== 'a' },
    });
    expect(text('a')).toBe('Tool execution skipped by before_tool_execution hook.');
    expect(results.get('a')!.isError).toBe(true);
    expect(trace.filter((t) => t.endsWith(':a') || t.endsWith(':a!'))).toEqual(['E:a!', 'm:a', 'M:a']);
    expect(log.started.map(([n]) => n)).toEqual(['b']);
  });

  it('hands beforeToolExecution the name, id and arguments; it may answer with a Promise', async () => {
    const seen: unknown[] = [];
    const { text } = await dispatchAsync([call('a', { x: 1 }, 'c1')], {
      tools: [tool('a', () => 'ran')],
      hooks: { beforeToolExecution: (...args) => (seen.push(args), Promise.resolve(false)) },
    });
    expect(seen).toEqual([['a', 'c1', { x: 1 }]]);
    expect(text('c1')).toBe(TOOL_TEXTS.skippedByHook);
  });

  it('waits for a beforeToolExecution that answers with an Observable, in virtual time', () => {
    const { text, events } = dispatch(calls('a'), { tools: [slow('a', 1, newLog())], hooks: { beforeToolExecution: () => timer(3).pipe(map(() => false)) } });
    expect(text('a')).toBe(TOOL_TEXTS.skippedByHook);
    expect(events.find((e) => e.type === 'ToolExecutionEnd')!.timestamp).toBe(3);
  });

  it('beforeToolExecutionUpdate false suppresses the update and afterToolExecutionUpdate is not called; the result is unaffected', () => {
    const after: string[] = [];
    const streaming = tool('s', () => from([toolUpdate('keep me'), toolUpdate('drop me'), { content: [{ type: 'text' as const, text: 'final' }] }]));
    const { trace, text } = dispatch(calls('s'), {
      tools: [streaming],
      hooks: {
        beforeToolExecutionUpdate: (_n, _id, partialText) => partialText !== 'drop me',
        afterToolExecutionUpdate: (_n, _id, partialText) => void after.push(partialText),
      },
    });
    expect(trace).toEqual(['S:s', 'U:s:keep me', 'E:s', 'm:s', 'M:s']);
    expect(after).toEqual(['keep me']);
    expect(text('s')).toBe('final');
  });

  it('calls afterToolExecution with the outcome', () => {
    const outcomes: Array<[string, boolean]> = [];
    dispatch([call('ok', {}, 'ok'), call('missing', {}, 'missing')], {
      tools: [tool('ok', () => 'fine')],
      hooks: { afterToolExecution: (name, _id, isError) => void outcomes.push([name, isError]) },
    });
    expect(outcomes).toEqual([['ok', false], ['missing', true]]);
  });

  it('a hook that throws → a HookError event, and the call goes on as if it had said continue', () => {
    const { trace, text } = dispatch(calls('a'), {
      tools: [slow('a', 1, newLog())],
      hooks: {
        beforeToolExecution: () => {
          throw new Error('hook bug');
        },
      },
    });
    expect(trace).toEqual(['H:beforeToolExecution:hook bug', 'S:a', 'E:a', 'm:a', 'M:a']);
    expect(text('a')).toBe('a done');
  });

  it('an async hook that fails (rejected Promise) → a HookError event too, and the result still follows', async () => {
    const { trace } = await dispatchAsync(calls('a'), {
      tools: [tool('a', () => 'ok')],
      hooks: { afterToolExecution: () => Promise.reject(new Error('late bug')) },
    });
    expect(trace).toEqual(['S:a', 'E:a', 'H:afterToolExecution:late bug', 'm:a', 'M:a']);
  });

  it('an update hook that throws → HookError, and the update still goes out', () => {
    const streaming = tool('s', () => from([toolUpdate('u1'), 'final']));
    const { trace } = dispatch(calls('s'), {
      tools: [streaming],
      hooks: { beforeToolExecutionUpdate: () => { throw new Error('oops'); } },
    });
    expect(trace).toEqual(['S:s', 'H:beforeToolExecutionUpdate:oops', 'U:s:u1', 'E:s', 'm:s', 'M:s']);
  });
});

describe('dispatchTools: pre-dispatch policies', () => {
  it('continue may rewrite the arguments; later policies and the tool see the rewritten ones', () => {
    const log = newLog();
    const seenBySecond: unknown[] = [];
    const { events } = dispatch([call('a', { path: '../etc/passwd' }, 'c1')], {
      tools: [slow('a', 1, log)],
      preDispatch: [
        (c) => ({ action: 'continue', arguments: { ...c.arguments, path: 'sandbox/passwd' } }),
        (c) => (seenBySecond.push(c.arguments), undefined),
      ],
    });
    expect(seenBySecond).toEqual([{ path: 'sandbox/passwd' }]);
    expect(log.args.a).toEqual({ path: 'sandbox/passwd' });
    expect(events.find((e) => e.type === 'ToolExecutionStart')).toMatchObject({ args: { path: 'sandbox/passwd' } });
  });

  it('skip gives that call an error result with the reason; the tool never runs', () => {
    const log = newLog();
    const { text, results } = dispatch(calls('a', 'b'), {
      tools: [slow('a', 1, log), slow('b', 1, log)],
      preDispatch: [(c) => (c.name === 'a' ? { action: 'skip', reason: 'not today' } : undefined)],
    });
    expect(text('a')).toBe('not today');
    expect(results.get('a')!.isError).toBe(true);
    expect(text('b')).toBe('b done');
    expect(log.started.map(([n]) => n)).toEqual(['b']);
  });

  it('stop skips this and the remaining calls and reports the reason through onStop', () => {
    const log = newLog();
    const stops: string[] = [];
    const { text } = dispatch(calls('a', 'b', 'c'), {
      strategy: 'sequential',
      tools: [slow('a', 1, log), slow('b', 1, log), slow('c', 1, log)],
      preDispatch: [(c) => (c.name === 'b' ? { action: 'stop', reason: 'budget spent' } : undefined)],
      onStop: (r) => void stops.push(r),
    });
    expect(stops).toEqual(['budget spent']);
    expect(text('a')).toBe('a done');
    expect(text('b')).toBe('Skipped: budget spent');
    expect(text('c')).toBe('Skipped: budget spent');
    expect(log.started.map(([n]) => n)).toEqual(['a']);
  });

  it('inject hands the messages to onInject and the call still runs', () => {
    const injected: AgentMessage[][] = [];
    const note = userMessage('remember the style guide', 0);
    const { text } = dispatch(calls('a'), {
      tools: [slow('a', 1, newLog())],
      preDispatch: [() => ({ action: 'inject', messages: [note] })],
      onInject: (m) => void injected.push(m),
    });
    expect(injected).toEqual([[note]]);
    expect(text('a')).toBe('a done');
  });

  it('gives policies the conversation and reports a throwing policy as a HookError (treated as continue)', () => {
    const history = [userMessage('hi', 0)];
    const seen: unknown[] = [];
    const { trace, text } = dispatch(calls('a'), {
      tools: [slow('a', 1, newLog())],
      messages: () => history,
      preDispatch: [
        (_c, ctx) => (seen.push(ctx.messages), undefined),
        () => {
          throw new Error('policy bug');
        },
      ],
    });
    expect(seen).toEqual([history]);
    expect(trace[0]).toBe('H:preDispatch:policy bug');
    expect(text('a')).toBe('a done');
  });
});

describe('dispatchTools: steering', () => {
  const three = (log: Log): AnyTool[] => [slow('a', 10, log), slow('b', 10, log), slow('c', 10, log)];

  it('sequential + skip: steering during a → b and c get "Skipped due to queued user message." (Start and End each)', () => {
    const log = newLog();
    const { trace, text, results } = dispatchWith(calls('a', 'b', 'c'), () => ({
      strategy: 'sequential', tools: three(log), steering: steeringAt(5, 'skip', virtual),
    }));
    expect(text('a')).toBe('a done');
    expect(text('b')).toBe('Skipped due to queued user message.');
    expect(text('c')).toBe('Skipped due to queued user message.');
    expect(results.get('b')!.isError).toBe(true);
    expect(trace.filter((t) => t.startsWith('S:') || t.startsWith('E:'))).toEqual(['S:a', 'E:a', 'S:b', 'E:b!', 'S:c', 'E:c!']);
    expect(log.started.map(([n]) => n)).toEqual(['a']);
  });

  it('parallel never skips: everything was already running', () => {
    const log = newLog();
    const { text } = dispatchWith(calls('a', 'b', 'c'), () => ({ tools: three(log), steering: steeringAt(5, 'skip', virtual) }));
    expect(['a', 'b', 'c'].map(text)).toEqual(['a done', 'b done', 'c done']);
  });

  it('batched checks between batches: steering in batch 1 skips batch 2', () => {
    const log = newLog();
    const tools = [...three(log), slow('d', 10, log)];
    const { text } = dispatchWith(calls('a', 'b', 'c', 'd'), () => ({ strategy: { batched: 2 }, tools, steering: steeringAt(5, 'skip', virtual) }));
    expect(['a', 'b', 'c', 'd'].map(text)).toEqual(['a done', 'b done', TOOL_TEXTS.skippedBySteering, TOOL_TEXTS.skippedBySteering]);
  });

  it('wait runs everything', () => {
    const log = newLog();
    const { text } = dispatchWith(calls('a', 'b', 'c'), () => ({ strategy: 'sequential', tools: three(log), steering: steeringAt(5, 'wait', virtual) }));
    expect(['a', 'b', 'c'].map(text)).toEqual(['a done', 'b done', 'c done']);
    expect(log.started).toEqual([['a', 0], ['b', 10], ['c', 20]]);
  });

  it('interrupt cancels the running tool the moment steering arrives and aborts its signal; the rest are not run', () => {
    const log = newLog();
    const { events, text } = dispatchWith(calls('a', 'b', 'c'), () => ({
      strategy: 'sequential', tools: [slow('a', 30, log), slow('b', 10, log), slow('c', 10, log)], steering: steeringAt(7, 'interrupt', virtual),
    }));
    expect(text('a')).toBe('tool call cancelled: user requested steering interrupt');
    expect(events.find((e) => e.type === 'ToolExecutionEnd' && e.toolName === 'a')!.timestamp).toBe(7);
    expect(log.signals.a!.aborted).toBe(true);
    expect(log.torndown).toEqual(['a']);
    expect(text('b')).toBe(TOOL_TEXTS.interrupted);
    expect(text('c')).toBe(TOOL_TEXTS.interrupted);
    expect(log.started.map(([n]) => n)).toEqual(['a']);
  });

  it('interrupt cancels every running call of a parallel batch', () => {
    const log = newLog();
    const { events, text } = dispatchWith(calls('a', 'b'), () => ({
      tools: [slow('a', 30, log), slow('b', 3, log)], steering: steeringAt(7, 'interrupt', virtual),
    }));
    expect(text('b')).toBe('b done');
    expect(text('a')).toBe(TOOL_TEXTS.interrupted);
    expect(events.find((e) => e.type === 'ToolExecutionEnd' && e.toolName === 'a')!.timestamp).toBe(7);
    expect(log.signals.a!.aborted).toBe(true);
    expect(log.signals.b!.aborted).toBe(false);
  });

  it('listens to steering arrivals through one subscription while calls run, and lets it go when they end', () => {
    const log = newLog();
    const subscribed: number[] = [];
    let open = 0;
    let most = 0;
    const arrivals$ = new Observable<unknown>(() => {
      open++;
      most = Math.max(most, open);
      subscribed.push(open);
      return () => void open--;
    });
    const { text } = dispatchWith(calls('a', 'b', 'c'), () => ({
      tools: [slow('a', 30, log), slow('b', 10, log), slow('c', 20, log)], steering: { pending: () => false, policy: () => 'interrupt', arrivals$ },
    }));
    expect(['a', 'b', 'c'].map(text)).toEqual(['a done', 'b done', 'c done']);
    expect(most).toBe(1); // three calls running at once, one subscription
    expect(subscribed).toEqual([1]);
    expect(open).toBe(0);
  });

  it('reads the policy when steering arrives: a per-message `wait` does not interrupt', () => {
    const log = newLog();
    const { text } = dispatchWith(calls('a', 'b'), () => ({
      strategy: 'sequential', tools: [slow('a', 30, log), slow('b', 10, log)], steering: steeringAt(7, 'wait', virtual),
    }));
    expect(['a', 'b'].map(text)).toEqual(['a done', 'b done']);
  });
});

describe('dispatchTools: abort and teardown', () => {
  it('abort via options.signal: the running tool gets "Tool execution aborted.", its signal aborts, later calls are not run', () => {
    const log = newLog();
    const controller = new AbortController();
    const { text, events } = dispatchWith(calls('a', 'b'), () => {
      virtual.schedule(() => controller.abort(), 4);
      return { strategy: 'sequential', signal: controller.signal, tools: [slow('a', 10, log), slow('b', 10, log)] };
    });
    expect(text('a')).toBe('Tool execution aborted.');
    expect(events.find((e) => e.type === 'ToolExecutionEnd' && e.toolName === 'a')!.timestamp).toBe(4);
    expect(log.signals.a!.aborted).toBe(true);
    expect(text('b')).toBe('Tool execution aborted.');
    expect(log.started.map(([n]) => n)).toEqual(['a']);
  });

  it('a signal aborted before dispatch: no tool runs, each call still gets a result', () => {
    const controller = new AbortController();
    controller.abort();
    const log = newLog();
    const { text } = dispatch(calls('a', 'b'), { signal: controller.signal, tools: [slow('a', 10, log), slow('b', 10, log)] });
    expect(['a', 'b'].map(text)).toEqual(['Tool execution aborted.', 'Tool execution aborted.']);
    expect(log.started).toEqual([]);
  });

  it('unsubscribing aborts the running tool’s signal and tears the tool down (no leak)', () => {
    const log = newLog();
    const { events } = dispatch(calls('a', 'b'), { tools: [slow('a', 100, log), slow('b', 100, log)] }, 20);
    expect(events.map(describeEvent)).toEqual(['S:a', 'S:b']);
    expect(log.signals.a!.aborted).toBe(true);
    expect(log.signals.b!.aborted).toBe(true);
    expect(log.torndown.sort()).toEqual(['a', 'b']);
  });

  it('unsubscribing from a tool that ignores its signal still tears down its Observable', () => {
    let subscribed = 0;
    let unsubscribed = 0;
    const stubborn = tool('stubborn', () => defer(() => (subscribed++, NEVER)).pipe(finalize(() => unsubscribed++)));
    dispatch(calls('stubborn'), { tools: [stubborn] }, 5);
    expect([subscribed, unsubscribed]).toEqual([1, 1]);
  });
});

describe('dispatchTools: the toolResults stage', () => {
  it('can redact results before they are emitted: End and the result message both carry the redacted content', () => {
    const leaky = tool('env', () => 'API_KEY=sk-123 HOME=/root');
    const redact = map((m: ToolResultMessage): ToolResultMessage => ({
      ...m,
      content: m.content.map((c) => (c.type === 'text' ? { ...c, text: c.text.replace(/sk-\w+/g, '[redacted]') } : c)),
    }));
    const { events, text } = dispatch(calls('env'), { tools: [leaky], toolResults: redact });
    expect(text('env')).toBe('API_KEY=[redacted] HOME=/root');
    const end = events.find((e) => e.type === 'ToolExecutionEnd') as EventOf<'ToolExecutionEnd'>;
    expect(resultText(end.result)).toBe('API_KEY=[redacted] HOME=/root');
    expect(JSON.stringify(events)).not.toContain('sk-123');
  });

  it('can mark a result as an error', () => {
    const markAll = map((m: ToolResultMessage): ToolResultMessage => ({ ...m, isError: true }));
    const { events, results } = dispatch(calls('a'), { tools: [tool('a', () => 'ok')], toolResults: markAll });
    expect(results.get('a')!.isError).toBe(true);
    expect(events.find((e) => e.type === 'ToolExecutionEnd')).toMatchObject({ isError: true });
  });
});

describe('dispatchTools: the source of calls', () => {
  it('dispatches calls as they arrive and completes when the source does', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const log = newLog();
      const calls$ = cold('a-b|', { a: call('a', {}, 'a'), b: call('b', {}, 'b') });
      const out$ = calls$.pipe(dispatchTools({ loopId, tools: [slow('a', 5, log), slow('b', 5, log)] }));
      expectObservable(out$.pipe(startsAndEnds())).toBe('A-B--a-(b|)');
    });
  });

  it('passes an error of the call source through', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const boom = new Error('bad call stream');
      expectObservable(cold<ToolCall>('-#', undefined, boom).pipe(dispatchTools({ loopId, tools: [] }))).toBe('-#', undefined, boom);
    });
  });

  it('emits nothing for no calls', () => {
    scheduler().run(({ expectObservable }) => {
      expectObservable(of<ToolCall>().pipe(dispatchTools({ loopId, tools: [] }))).toBe('|');
    });
  });
});
