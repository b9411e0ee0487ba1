import type { LoopState, RunInfo } from './loop-state.js';

/**
 * What a stage keeps per run, made on the run's first state: by the state's `run` object (one stage
 * serves interleaved runs, each with its own), and for states without one, by loop id (the value
 * of the loop seen last). The built-in stages keep the views of a run's messages, its tool dispatch
 * and where its model chain stands this way.
 *
 * @example
 * const viewsOf = keptPerRun(() => new LlmViews());
 * const stage = loopStage((state) => stateWith(state, { request: requestFrom(viewsOf(state).of(state.messages)) }));
 */
export function keptPerRun<T>(make: (state: LoopState) => T): (state: LoopState) => T {
  const byRun = new WeakMap<RunInfo, T>();
  let own: { readonly loopId: string; readonly value: T } | undefined;
  return (state) => {
    const run = state.run;
    if (run === undefined) {
      if (own?.loopId !== state.loopId) own = { loopId: state.loopId, value: make(state) };
      return own.value;
    }
    let value = byRun.get(run);
    if (value === undefined && !byRun.has(run)) byRun.set(run, (value = make(state)));
    return value as T;
  };
}
