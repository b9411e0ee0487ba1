// phi-rx `agentLoop` given what `BasicAgent` gives each of its runs (an abort signal, steering and follow-up queues,
// a stream of call cancellations), consumed by subscribing: `BasicAgent` / this is what the stateful facade costs
// (its conversation, replay log, view state, session record), this / `agentLoop` what the wiring does.
import { contender } from './phi-common.mjs';

export const label = 'phi-rx agentLoop, wired as BasicAgent wires it';

export const { run, runWith } = contender((c, workload, counts, tools) =>
  c.consume(c.phi.agentLoop(c.prompts(), c.context(tools), wiredConfig(c, workload)), counts),
);

/** The shared loop config with what `BasicAgent` gives each run of its own: a signal, two queues, call cancellations. */
export function wiredConfig(c, workload) {
  const controller = new AbortController();
  return {
    ...c.config(workload),
    signal: controller.signal,
    steering: new c.phi.MessageQueue('oneAtATime'),
    followUp: new c.phi.MessageQueue('oneAtATime'),
    cancelToolCalls: new c.phi.Broadcast().asObservable(),
  };
}
