// phi-rx `BasicAgent` (the stateful facade: queues, abort signal, ids, conversation) with a
// SessionRecorder in the pipeline, one agent and one recorder per simulated user.
import { PROMPT, SYSTEM_PROMPT } from '../workload.mjs';
import { checkConversation } from './phi-basic-agent.mjs';
import { checkRecorded } from './phi-record-session.mjs';
import { contender } from './phi-common.mjs';

export const label = 'phi-rx BasicAgent + recordSession';

export const { run, runWith } = contender(async (c, workload, counts, tools) => {
  const recorder = new c.phi.SessionRecorder();
  const agent = new c.phi.BasicAgent({ model: c.model, provider: c.provider(workload), systemPrompt: SYSTEM_PROMPT, tools });
  await c.consume(agent.prompt(PROMPT).pipe(c.phi.recordSession(recorder)), counts);
  recorder.flush();
  checkRecorded(recorder, workload);
  checkConversation(agent, workload);
});
