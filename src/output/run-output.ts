import type { Observable } from 'rxjs';
import type { AgentEndEvent, AgentEvent } from '../types/events.js';
import { runToEnd } from '../sources/interop.js';
import { InvalidOutputError, type OutputOf, type OutputSchema } from './output-spec.js';
import { AgentRunError, isFailedEnd } from './run-text.js';

/**
 * The structured output of a run's end, typed by the schema the run was given: `end.output`.
 * Throws an {@link InvalidOutputError} (AgentError `InvalidOutput`, with `issues` and `text`) when
 * the answer stayed invalid after its corrective turn, and an {@link AgentRunError} when the run
 * failed, was aborted, or ended without an answer to check (a limit, a stop policy).
 *
 * @example
 * const end = await runToEnd(agentLoop(prompts, context, { model, output: Weather }));
 * const weather = outputOf(end, Weather); // { city: string; celsius: number }
 */
export function outputOf<S extends OutputSchema>(end: AgentEndEvent, _schema?: S): OutputOf<S> {
  if (isFailedEnd(end)) throw new AgentRunError(end);
  if (end.outputError) throw new InvalidOutputError(end.outputError);
  if (!('output' in end)) throw new AgentRunError(end);
  return end.output as OutputOf<S>;
}

/**
 * Runs `run$` (a run with `config.output`) to its end and resolves its typed output; rejects as
 * {@link outputOf} throws.
 *
 * @example
 * const weather = await runOutput(agentLoop(prompts, context, { model, output: Weather }), Weather);
 */
export async function runOutput<S extends OutputSchema>(run$: Observable<AgentEvent>, schema?: S): Promise<OutputOf<S>> {
  return outputOf(await runToEnd(run$), schema);
}
