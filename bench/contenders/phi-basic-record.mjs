// phi-rx `BasicAgent` (the stateful facade: queues, abort signal, ids, conversation) with a
// SessionRecorder in the pipeline, one agent and one recorder per simulated user.
import { PROMPT, SYSTEM_PROMPT, newCounts, runAgents } from '../workload.mjs';
import { checkRecorded } from './phi-record-session.mjs';
import * as common from './phi-common.mjs';

export const label = 'phi-rx BasicAgent + recordSession';

export function run(workload) {
  return runWith(common, workload);
}

/** The run over the bundle `c` was made for (`phiCommon`): `ab.mjs` runs two. */
export function runWith(c, workload) {
  const counts = newCounts();
  const tools = [c.lookupTool(counts)];
  return runAgents(workload, counts, async () => {
    const recorder = new c.phi.SessionRecorder();
    const agent = new c.phi.BasicAgent({
      model: c.phi.scriptedModel(),
      provider: c.provider(workload),
      systemPrompt: SYSTEM_PROMPT,
      tools,
    });
    await c.consume(agent.prompt(PROMPT).pipe(c.phi.recordSession(recorder)), counts);
    recorder.flush();
    checkRecorded(recorder, workload);
    const expected = 1 + workload.turns + (workload.turns - 1) * workload.tools;
    if (agent.messages.length !== expected) throw new Error(`BasicAgent: expected ${expected} messages in the conversation, got ${agent.messages.length}`);
  });
}
