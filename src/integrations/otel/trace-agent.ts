import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
import { AgentTracing, type AgentTracingOptions } from './agent-tracing.js';

/**
 * Records OpenTelemetry spans and metrics for the agent events passing through, and passes every
 * event on unchanged. Spans start and end at the events' timestamps. If the subscriber leaves
 * before a run's AgentEnd, the spans of that run still open end at the last event's timestamp,
 * marked `error.type = cancelled`.
 *
 * ```
 * source:  -A-T-S-M-E-N-Z|     A: AgentStart, T: TurnStart, S: MessageStart, M: MessageEnd,
 * output:  -A-T-S-M-E-N-Z|     E: ToolExecutionStart, N: ToolExecutionEnd, Z: AgentEnd
 * spans:   invoke_agent ⊃ { chat (T→M), execute_tool (E→N) }
 * ```
 *
 * @param tracing An `AgentTracing` to share with sub-agents, or options for a new one.
 *
 * @example
 * const tracing = new AgentTracing({ agentName: 'support', tracerProvider });
 * agentLoop([userMessage('hi')], context, config).pipe(traceAgent(tracing)).subscribe(render);
 */
export function traceAgent(tracing: AgentTracing | AgentTracingOptions = {}): MonoTypeOperatorFunction<AgentEvent> {
  const tracer = tracing instanceof AgentTracing ? tracing : new AgentTracing(tracing);
  return (source) =>
    new Observable<AgentEvent>((subscriber) => {
      const open = new Set<string>();
      let last = 0;
      const subscription = source.subscribe({
        next(event) {
          last = event.timestamp;
          if (event.type === 'AgentStart') open.add(event.loopId);
          else if (event.type === 'AgentEnd') open.delete(event.loopId);
          tracer.record(event);
          subscriber.next(event);
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
      return () => {
        subscription.unsubscribe();
        if (open.size > 0) tracer.close(open, last);
      };
    });
}
