// phi-rx `BasicAgent` (the stateful facade: queues, abort signal, ids, conversation) with a
// SessionRecorder in the pipeline, one agent and one recorder per simulated user.
import { PROMPT, SYSTEM_PROMPT, newCounts, runAgents } from '../workload.mjs';
import { checkRecorded } from './phi-record-session.mjs';
import { consume, lookupTool, phi, provider } from './phi-common.mjs';

export const label = 'phi-rx BasicAgent + recordSession';

export function run(workload) {
  const counts = newCounts();
  const tools = [lookupTool(counts)];
  return runAgents(workload, counts, async () => {
    const recorder = new phi.SessionRecorder();
    const agent = new phi.BasicAgent({
      model: phi.scriptedModel(),
      provider: provider(workload),
      systemPrompt: SYSTEM_PROMPT,
      tools,
    });
    await consume(agent.prompt(PROMPT).pipe(phi.recordSession(recorder)), counts);
    recorder.flush();
    checkRecorded(recorder, workload);
    const expected = 1 + workload.turns + (workload.turns - 1) * workload.tools;
    if (agent.messages.length !== expected) throw new Error(`BasicAgent: expected ${expected} messages in the conversation, got ${agent.messages.length}`);
  });
}
