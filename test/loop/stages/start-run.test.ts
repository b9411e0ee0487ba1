import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { loopState, type RunInfo, startRun } from '../../../src/index.js';
import { AgentError } from '../../../src/types/errors.js';
import { InputVerdict, type InputFilter } from '../../../src/types/hooks.js';
import { textOf, userMessage, type AgentMessage } from '../../../src/types/message.js';

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
