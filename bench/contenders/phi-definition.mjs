// phi-rx `defineAgent`: one definition per process (model, provider, system prompt, tool), as a server
// module holds it; each simulated user is a session of it (a BasicAgent of its own: conversation,
// queues, approvals, abort, session record), its events piped through `recordSession`.
import { PROMPT, SYSTEM_PROMPT } from '../workload.mjs';
import { checkConversation } from './phi-basic-agent.mjs';
import { checkRecorded } from './phi-record-session.mjs';
import { contender } from './phi-common.mjs';

export const label = 'phi-rx defineAgent session + recordSession';

const definitions = new WeakMap();

/** The definition of this bundle and workload, made once (as at module level in a server). */
function definition(c, workload, tools) {
  let byWorkload = definitions.get(c);
  if (!byWorkload) definitions.set(c, (byWorkload = new Map()));
  let defined = byWorkload.get(workload);
  if (!defined) byWorkload.set(workload, (defined = c.phi.defineAgent({ model: c.model, provider: c.provider(workload), systemPrompt: SYSTEM_PROMPT, tools })));
  return defined;
}

export const { run, runWith } = contender(async (c, workload, counts, tools) => {
  const recorder = new c.phi.SessionRecorder();
  const agent = definition(c, workload, tools).session();
  await c.consume(agent.prompt(PROMPT).pipe(c.phi.recordSession(recorder)), counts);
  recorder.flush();
  checkRecorded(recorder, workload);
  checkConversation(agent, workload);
});
