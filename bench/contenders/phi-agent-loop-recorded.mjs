// phi-rx `agentLoop` wired as `BasicAgent` wires a run (phi-agent-loop-wired), its events recorded by `recordSession`
// as `BasicAgent` records every event of its session: what a `BasicAgent` run must do, in `agentLoop`'s terms.
// `BasicAgent` / this is what the facade adds on top (its conversation, replay log for late subscribers, view state,
// run controls); this / `agentLoop` what the wiring and the session record cost.
import { checkRecorded } from './phi-record-session.mjs';
import { wiredConfig } from './phi-agent-loop-wired.mjs';
import { contender } from './phi-common.mjs';

export const label = 'phi-rx agentLoop, wired as BasicAgent wires it, + recordSession';

export const { run, runWith } = contender(async (c, workload, counts, tools) => {
  const recorder = new c.phi.SessionRecorder();
  await c.consume(c.phi.agentLoop(c.prompts(), c.context(tools), wiredConfig(c, workload)).pipe(c.phi.recordSession(recorder)), counts);
  recorder.flush();
  checkRecorded(recorder, workload);
});
