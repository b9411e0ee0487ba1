// phi-rx `BasicAgent` + `recordSession` with its tool defined per conversation, inline, as a request
// handler that builds its agent per request does (the AI SDK docs' own pattern): a zod schema made anew
// and `defineTool` called for every simulated user (an equal schema seen before is found by its
// structure, not converted and compiled again).
import { PROMPT, SYSTEM_PROMPT, TOOL_DESCRIPTION, TOOL_NAME, toolOutput } from '../workload.mjs';
import { checkConversation } from './phi-basic-agent.mjs';
import { checkRecorded } from './phi-record-session.mjs';
import { contender } from './phi-common.mjs';

export const label = 'phi-rx BasicAgent + recordSession, tool defined per conversation';

export const { run, runWith } = contender(async (c, workload, counts) => {
  const { z } = c.phi;
  const lookup = c.phi.defineTool({
    name: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    parameters: z.object({ path: z.string(), line: z.number() }),
    execute: (args) => {
      counts.executed++;
      return toolOutput(args);
    },
  });
  const recorder = new c.phi.SessionRecorder();
  const agent = new c.phi.BasicAgent({ model: c.model, provider: c.provider(workload), systemPrompt: SYSTEM_PROMPT, tools: [lookup] });
  await c.consume(agent.prompt(PROMPT).pipe(c.phi.recordSession(recorder)), counts);
  recorder.flush();
  checkRecorded(recorder, workload);
  checkConversation(agent, workload);
});
