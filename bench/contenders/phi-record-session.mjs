// phi-rx `agentLoop` with a SessionRecorder in the pipeline (`recordSession`), one recorder per
// agent, flushed at the end; the recorded session is checked so the recording cannot be skipped.
import { contender } from './phi-common.mjs';

export const label = 'phi-rx agentLoop + recordSession';

export const { run, runWith } = contender(async (c, workload, counts, tools) => {
  const recorder = new c.phi.SessionRecorder();
  const events$ = c.phi.agentLoop(c.prompts(), c.context(tools), c.config(workload));
  await c.consume(events$.pipe(c.phi.recordSession(recorder)), counts);
  recorder.flush();
  checkRecorded(recorder, workload);
});

/** The recorder must hold one completed loop with every message of the run. */
export function checkRecorded(recorder, workload) {
  const sessions = recorder.sessions();
  const loop = sessions[0]?.loops[0];
  const messages = 1 + workload.turns + (workload.turns - 1) * workload.tools;
  if (sessions.length !== 1 || sessions[0].loops.length !== 1 || loop.status !== 'completed' || loop.messages.length !== messages || recorder.warnings !== 0) {
    throw new Error(
      `recordSession: expected 1 session with 1 completed loop of ${messages} messages and no warnings; got ${sessions.length} session(s), ` +
        `${sessions[0]?.loops.length ?? 0} loop(s), status ${loop?.status}, ${loop?.messages.length ?? 0} message(s), ${recorder.warnings} warning(s)`,
    );
  }
}
