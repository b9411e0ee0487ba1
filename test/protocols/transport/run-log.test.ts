import { describe, expect, it } from 'vitest';
import { map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { RunLog } from '../../../src/protocols/transport/index.js';
import { runEvents } from '../../view/fixtures.js';

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const ids = (log: RunLog, after: number) => log.framesAfter(after).pipe(map((f) => `${f.id}`));

describe('RunLog', () => {
  it('records a run once; a client gets the frames after its id, then the live ones, then the end frame (marbles)', () => {
    const { ev } = runEvents();
    const s = scheduler();
    s.run(({ cold, expectObservable }) => {
      const log = new RunLog(cold('-A-P-p-------T-|', ev), 100, { coalesceDeltasMs: false });
      // subscribed at frame 6: frames 1..3 are replayed at once, 4 and the end frame (5) arrive live
      expectObservable(ids(log, 1), '------^').toBe('------(23)---4-(5|)');
      expectObservable(ids(log, 0), '------^').toBe('------(123)--4-(5|)');
    });
  });

  it('keeps only the last `capacity` frames and says which ones fell out', () => {
    const { ev } = runEvents();
    const s = scheduler();
    s.run(({ cold, expectObservable }) => {
      const log = new RunLog(cold('ABCDEFG|', { A: ev.A!, B: ev.P!, C: ev.p!, D: ev.T!, E: ev.X!, F: ev.g!, G: ev.x! }), 3, { coalesceDeltasMs: false });
      expectObservable(ids(log, 5), '---------^').toBe('---------(678|)');
      expectObservable(ids(log, 4), '---------^').toBe(
        '---------#',
        undefined,
        expect.objectContaining({ code: 'ResumeGap', message: 'cannot resume after event 4: events 5..5 fell out of the replay buffer (it holds 6..8); reload the run' }),
      );
      expectObservable(ids(log, 9), '---------^').toBe('---------#', undefined, expect.objectContaining({ message: 'Last-Event-ID 9 is not an event of this run (its ids are 1..8)' }));
    });
  });
});
