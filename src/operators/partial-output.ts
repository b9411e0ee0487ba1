import { concatMap, defer, type OperatorFunction } from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import type { AssistantMessage } from '../types/message.js';
import { parsePartialJson } from '../output/partial-json.js';
import type { OutputOf, OutputSchema } from '../output/output-spec.js';

/** An object as far as it has arrived: every property optional, all the way down. */
export type DeepPartial<T> = T extends ReadonlyArray<infer I>
  ? Array<DeepPartial<I>>
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;

/**
 * The structured answer as it streams, for UIs that render it while it arrives: each time the
 * text of the run's own assistant message grows (a forced output tool's arguments arrive as that
 * text too), it is parsed with {@link parsePartialJson} and the object so far is emitted when it
 * changed. A new assistant message (the next turn, a corrective turn) starts over from nothing; a
 * `MessageReset` starts over from the message it carries. Text that is not JSON (a sentence
 * before a tool call) emits nothing; numbers and `true` / `false` / `null` appear once complete,
 * strings as they grow. Sub-agents' and parallel children's messages are left out. Each emission
 * is a new object; parsing is linear in the text so far, so for long answers add `auditTime` to
 * render at most once a frame.
 *
 * ```
 * run$:    --S--U({"ci)--U(ty":"Pa)--U(ris","c":1)--U(8})--E--|
 * partialOutput()
 * output:  -----a--------b-----------c---------------d--------|
 * (a: {}, b: {city: 'Pa'}, c: {city: 'Paris'} (18 may still grow), d: {city: 'Paris', c: 18})
 * ```
 *
 * @example
 * agent.prompt('Weather in Paris?', { output: Weather }).pipe(partialOutput(Weather))
 *   .subscribe((weather) => render(weather)); // { city?: string; celsius?: number }
 */
export function partialOutput<S extends OutputSchema>(_schema?: S): OperatorFunction<AgentEvent, DeepPartial<OutputOf<S>>> {
  return (run$) =>
    defer(() => {
      // Loops started by this run on behalf of a parent loop (sub-agents, parallel children).
      const children = new Set<string>();
      let text = '';
      let shown: string | undefined;
      const update = (next: string): Array<DeepPartial<OutputOf<S>>> => {
        text = next;
        const parsed = parsePartialJson(text);
        if (!parsed) return [];
        const serialized = JSON.stringify(parsed.value);
        if (serialized === shown) return [];
        shown = serialized;
        return [parsed.value as DeepPartial<OutputOf<S>>];
      };
      return run$.pipe(
        concatMap((event): Array<DeepPartial<OutputOf<S>>> => {
          if (event.type === 'AgentStart' && event.parentLoopId !== undefined) children.add(event.loopId);
          if (!('loopId' in event) || children.has(event.loopId)) return [];
          switch (event.type) {
            case 'MessageStart':
              if (event.message.role === 'assistant') {
                text = '';
                shown = undefined;
              }
              return [];
            case 'MessageUpdate':
              return event.delta.type === 'text' ? update(text + event.delta.delta) : [];
            case 'MessageReset':
              shown = undefined;
              return update(textOf(event.message));
            default:
              return [];
          }
        }),
      );
    });
}

function textOf(message: AssistantMessage): string {
  return message.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
}
