import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { admitPrompts, endRun, loopState, type RunInfo, startRun, type LoopState } from '../../../src/index.js';
import { AgentError } from '../../../src/types/errors.js';
import { InputVerdict, type InputFilter } from '../../../src/types/hooks.js';
import { emptyAssistant, textOf, userMessage, type AgentMessage } from '../../../src/types/message.js';
import { Usage } from '../../../src/types/usage.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const history = [userMessage('earlier', 0)];
const noSecrets: InputFilter = (m) => (m.role === 'user' && textOf(m).includes('password') ? InputVerdict.reject('no secrets') : InputVerdict.pass());

describe('startRun', () => {
  const ids = { agentId: 'A', sessionId: 'S' };

  it('emits AgentStart (with what it is given), then the state; a throwing beforeLoop is reported after AgentStart', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s = loopState('L', history);
      const broken = (): boolean => {
        throw new Error('hook bug');
      };
      expectObservable(cold('-s----|', { s }).pipe(startRun({ ...ids, parentLoopId: 'P', metadata: { user: 7 }, beforeLoop: broken }))).toBe('-(ahs)|', {
        a: { type: 'AgentStart', agentId: 'A', sessionId: 'S', loopId: 'L', parentLoopId: 'P', timestamp: 1, metadata: { user: 7 } },
        h: { type: 'HookError', loopId: 'L', hook: 'beforeLoop', message: 'hook bug', timestamp: 1 },
        s,
      });
    });
  });

  it('a veto emits nothing and ends the run as userStop; the hook sees the context and loop index 0; it may answer later', () => {
    const asked: Array<[readonly AgentMessage[], number]> = [];
    scheduler().run(({ cold, expectObservable }) => {
      const s = loopState('L', history);
      const veto = (messages: readonly AgentMessage[], index: number): ReturnType<typeof cold<boolean>> => {
        asked.push([messages, index]);
        return cold('--(f|)', { f: false });
      };
      expectObservable(cold('s|', { s }).pipe(startRun({ ...ids, beforeLoop: veto }))).toBe('--(v|)', { v: { ...s, ended: 'userStop' } });
    });
    expect(asked).toEqual([[history, 0]]);
  });
});

describe('startRun from the state\'s run', () => {
  const run: RunInfo = { agentId: 'A', sessionId: 'S', parentLoopId: 'P', continuationKind: { kind: 'default' }, firstTrigger: 'continuation' };

  it('one stage serves every run: each AgentStart names the ids of the run whose state it gets; options still win', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const one = loopState('L1', history, [], run);
      const two = loopState('L2', history, [], { agentId: 'B', sessionId: 'T', firstTrigger: 'user' });
      expectObservable(cold('-o----t----|', { o: one, t: two }).pipe(startRun({ fromRun: true }))).toBe('-(ao)-(bt)-|', {
        a: { type: 'AgentStart', agentId: 'A', sessionId: 'S', loopId: 'L1', parentLoopId: 'P', continuationKind: { kind: 'default' }, timestamp: 1 },
        o: one,
        b: { type: 'AgentStart', agentId: 'B', sessionId: 'T', loopId: 'L2', timestamp: 6 },
        t: two,
      });
      expectObservable(cold('-o---|', { o: one }).pipe(startRun({ fromRun: true, agentId: 'mine' }))).toBe('-(ao)|', {
        a: { type: 'AgentStart', agentId: 'mine', sessionId: 'S', loopId: 'L1', parentLoopId: 'P', continuationKind: { kind: 'default' }, timestamp: 1 },
        o: one,
      });
    });
  });

  it('options without ids do not type-check, unless they say fromRun', () => {
    // @ts-expect-error an own loop's startRun names its agent and session
    startRun();
    // @ts-expect-error the session too
    startRun({ agentId: 'A' });
    expect(typeof startRun({ agentId: 'A', sessionId: 'S' })).toBe('function');
    expect(typeof startRun({ fromRun: true })).toBe('function');
  });

  it('a state without a run and options without ids fail the stage with an AgentError naming what is missing', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s = loopState('L', history);
      expectObservable(cold('-s|', { s }).pipe(startRun({ fromRun: true }))).toBe(
        '-#',
        undefined,
        new AgentError('InvalidConfig', 'startRun: no agentId: pass { agentId, sessionId } in the options, or { fromRun: true } over a state whose run names it (loopState(loopId, messages, pending, run))'),
      );
      expectObservable(cold('-s|', { s }).pipe(startRun({ fromRun: true, agentId: 'A' }))).toBe(
        '-#',
        undefined,
        new AgentError('InvalidConfig', 'startRun: no sessionId: pass { agentId, sessionId } in the options, or { fromRun: true } over a state whose run names it (loopState(loopId, messages, pending, run))'),
      );
    });
  });
});

describe('admitPrompts', () => {
  const a = userMessage('a', 1);
  const x = userMessage('my password', 2);

  it('without prompts of its own, admits each state\'s run prompts (none for a run without)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const one = loopState('L1', history, [], { agentId: 'A', sessionId: 'S', prompts: [a], firstTrigger: 'user' });
      const two = loopState('L2', history, [], { agentId: 'A', sessionId: 'S', prompts: [x], firstTrigger: 'user' });
      const cont = loopState('L3', history, [], { agentId: 'A', sessionId: 'S', firstTrigger: 'continuation' });
      expectObservable(cold('-o-t-c|', { o: one, t: two, c: cont }).pipe(admitPrompts())).toBe('-o-t-c|', {
        o: { ...one, pending: [a] },
        t: { ...two, pending: [x] },
        c: cont,
      });
      expectObservable(cold('-t---|', { t: two }).pipe(admitPrompts(undefined, { filters: [noSecrets] }))).toBe('-(rp)|', {
        r: { type: 'InputRejected', loopId: 'L2', reason: 'no secrets', timestamp: 1 },
        p: { ...two, ended: 'stop', rejection: 'no secrets' },
      });
    });
  });

  it('appends the prompts to pending, with no filters at once', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s = loopState('L', history);
      expectObservable(cold('-s|', { s }).pipe(admitPrompts([a]))).toBe('-p|', { p: { ...s, pending: [a] } });
    });
  });

  it('a refused prompt refuses them all: InputRejected, and the run ends with the rejection', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s = loopState('L', history);
      expectObservable(cold('-s---|', { s }).pipe(admitPrompts([a, x], { filters: [noSecrets] }))).toBe('-(rp)|', {
        r: { type: 'InputRejected', loopId: 'L', reason: 'no secrets', timestamp: 1 },
        p: { ...s, ended: 'stop', rejection: 'no secrets' },
      });
    });
  });
});

describe('endRun', () => {
  const answer = { ...emptyAssistant('m', 'p', 2), stopReason: 'length' as const };
  const usage = { ...Usage.empty(), input: 10, output: 5, totalTokens: 15 };

  it('emits AgentEnd with the new messages, the usage and the way the run ended, then calls afterLoop', () => {
    const seen: Array<[readonly AgentMessage[], Usage]> = [];
    scheduler().run(({ cold, expectObservable }) => {
      const s: LoopState = { ...loopState('L', history), newMessages: [answer], usage, lastStopReason: 'length' };
      const t: LoopState = { ...s, ended: 'maxTurns', rejection: 'why' };
      const after = (messages: readonly AgentMessage[], u: Usage): void => void seen.push([messages, u]);
      expectObservable(cold('-s-----t-----|', { s, t }).pipe(endRun({ afterLoop: after }))).toBe('-(es)--(fu)--|', {
        e: { type: 'AgentEnd', loopId: 'L', messages: [answer], usage, timestamp: 1, stopReason: 'length' },
        s,
        f: { type: 'AgentEnd', loopId: 'L', messages: [answer], usage, timestamp: 7, stopReason: 'maxTurns', rejection: 'why' },
        u: t,
      });
    });
    expect(seen).toEqual([[[answer], usage], [[answer], usage]]);
  });

  it('an aborted signal makes it aborted; a failing afterLoop is a HookError after AgentEnd', () => {
    const controller = new AbortController();
    controller.abort();
    scheduler().run(({ cold, expectObservable }) => {
      const s: LoopState = loopState('L', history);
      expectObservable(cold('-s----|', { s }).pipe(endRun({ signal: controller.signal, afterLoop: () => { throw new Error('store down'); } }))).toBe('-(ehs)|', {
        e: { type: 'AgentEnd', loopId: 'L', messages: [], usage: Usage.empty(), timestamp: 1, stopReason: 'aborted' },
        h: { type: 'HookError', loopId: 'L', hook: 'afterLoop', message: 'store down', timestamp: 1 },
        s,
      });
    });
  });
});
