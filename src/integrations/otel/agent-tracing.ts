import {
  ROOT_CONTEXT, SpanKind, SpanStatusCode, metrics, trace,
  type Attributes, type Context, type HrTime, type Histogram, type MeterProvider, type Span, type Tracer, type TracerProvider,
} from '@opentelemetry/api';
import type { MonoTypeOperatorFunction } from 'rxjs';
import type { AgentEvent, EventOf } from '../../types/events.js';
import type { AssistantMessage } from '../../types/message.js';
import { traceAgent } from './trace-agent.js';

export interface AgentTracingOptions {
  /** Default: the global tracer provider (`trace.getTracerProvider()`). */
  tracerProvider?: TracerProvider;
  /** Default: the global meter provider (`metrics.getMeterProvider()`). */
  meterProvider?: MeterProvider;
  /** `gen_ai.agent.name` of top-level runs; sub-agents are named after their tool. */
  agentName?: string;
  /**
   * Record message content (`gen_ai.output.messages`, `gen_ai.tool.call.arguments`,
   * `gen_ai.tool.call.result`). Off by default: content can hold personal data.
   */
  captureContent?: boolean;
}

const SCOPE = 'phi-rx';

interface LoopSpan {
  span: Span;
  context: Context;
  name: string;
  /** Start of the model call in progress (TurnStart, after compaction, after a retry delay). */
  callStart: number;
  /** 0 for a first attempt, N for the Nth retry. */
  attempt: number;
  /** The model of this loop's calls, once a message named it (failed attempts before any output do not). */
  model?: { provider: string; id: string };
}

interface ToolSpan {
  span: Span;
  context: Context;
  toolName: string;
}

/**
 * OpenTelemetry spans and metrics for agent runs, after the GenAI semantic conventions:
 * `invoke_agent {name}` per run, `chat {model}` per model call (one per attempt, so retries
 * show), `execute_tool {tool}` per tool call. Share one `AgentTracing` between a parent agent and
 * its sub-agents (`subAgentTool({ config: { operators: { events: tracing.trace() } } })`): a
 * sub-agent's run nests under the tool call that started it. Span times are the events'
 * timestamps (the run's scheduler), so virtual-time tests see exact durations.
 *
 * @example
 * const tracing = new AgentTracing({ agentName: 'support' });
 * const agent = new BasicAgent({ model, tracing });
 * // or, on any event stream: agentLoop(prompts, context, config).pipe(tracing.trace())
 */
export class AgentTracing {
  private readonly tracer: Tracer;
  private readonly tokenUsage: Histogram;
  private readonly duration: Histogram;
  private readonly loops = new Map<string, LoopSpan>();
  private readonly tools = new Map<string, ToolSpan>();
  /** Parallel runs in progress, keyed by branch loop id. */
  private readonly branches = new Map<string, { span: Span; context: Context; index: number }>();

  constructor(private readonly options: AgentTracingOptions = {}) {
    this.tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE);
    const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE);
    this.tokenUsage = meter.createHistogram('gen_ai.client.token.usage', { unit: '{token}', description: 'Number of input and output tokens used.' });
    this.duration = meter.createHistogram('gen_ai.client.operation.duration', { unit: 's', description: 'GenAI operation duration.' });
  }

  /** The operator: traces every event passing through (see `traceAgent`). */
  trace(): MonoTypeOperatorFunction<AgentEvent> {
    return traceAgent(this);
  }

  /** Records one event: opens, annotates or ends the spans it concerns. */
  record(event: AgentEvent): void {
    switch (event.type) {
      case 'ParallelLoopStart': return this.parallelStart(event);
      case 'ParallelLoopEnd': return this.parallelEnd(event);
      case 'AgentStart': return this.agentStart(event);
      case 'AgentEnd': return this.agentEnd(event);
      case 'TurnStart': return this.markCallStart(event.loopId, event.timestamp);
      case 'CompactionEnd': return this.markCallStart(event.loopId, event.timestamp);
      case 'RetryScheduled': return this.failedAttempt(event);
      case 'ModelFallback': return this.fallback(event);
      case 'Handoff': return this.handoff(event);
      case 'MessageStart': return event.message.role === 'assistant' ? this.modelSeen(event.loopId, event.message) : undefined;
      case 'MessageEnd': return event.message.role === 'assistant' ? this.modelCall(event.loopId, event.message, event.timestamp) : undefined;
      case 'ToolExecutionStart': return this.toolStart(event);
      case 'ToolExecutionEnd': return this.toolEnd(event);
      default: return undefined;
    }
  }

  /** Ends what is still open for these loops (the subscriber left before AgentEnd). */
  close(loopIds: Iterable<string>, time: number): void {
    for (const loopId of loopIds) {
      const group = this.branches.get(loopId);
      if (group) this.endGroup(group.span, time, 'cancelled');
      for (const [key, tool] of this.tools) {
        if (!key.startsWith(`${loopId}/`)) continue;
        fail(tool.span, 'cancelled');
        tool.span.end(at(time));
        this.tools.delete(key);
      }
      const loop = this.loops.get(loopId);
      if (!loop) continue;
      fail(loop.span, 'cancelled');
      loop.span.end(at(time));
      this.loops.delete(loopId);
    }
  }

  private agentStart(e: EventOf<'AgentStart'>): void {
    const parentTool = e.parentLoopId && e.parentToolCallId ? this.tools.get(`${e.parentLoopId}/${e.parentToolCallId}`) : undefined;
    const parentLoop = e.parentLoopId ? this.loops.get(e.parentLoopId) : undefined;
    const branch = this.branches.get(e.loopId);
    const parent = parentTool?.context ?? branch?.context ?? parentLoop?.context ?? ROOT_CONTEXT;
    const name = parentTool?.toolName ?? this.options.agentName ?? e.agent;
    const attributes: Attributes = {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.id': e.agentId,
      'gen_ai.conversation.id': e.sessionId,
      'phi_rx.loop_id': e.loopId,
      ...(name ? { 'gen_ai.agent.name': name } : {}),
      ...(e.parentLoopId ? { 'phi_rx.parent_loop_id': e.parentLoopId } : {}),
      ...(e.continuationKind ? { 'phi_rx.continuation': e.continuationKind.kind } : {}),
      ...(branch ? { 'phi_rx.parallel.branch_index': branch.index } : {}),
      ...(e.agent !== undefined ? { 'phi_rx.agent': e.agent } : {}),
    };
    const span = this.tracer.startSpan(name ? `invoke_agent ${name}` : 'invoke_agent', { kind: SpanKind.INTERNAL, startTime: at(e.timestamp), attributes }, parent);
    this.loops.set(e.loopId, { span, context: trace.setSpan(parent, span), name: name ?? '', callStart: e.timestamp, attempt: 0 });
  }

  private agentEnd(e: EventOf<'AgentEnd'>): void {
    const loop = this.loops.get(e.loopId);
    if (!loop) return;
    loop.span.setAttributes({
      'gen_ai.usage.input_tokens': e.usage.input,
      'gen_ai.usage.output_tokens': e.usage.output,
      'phi_rx.stop_reason': e.stopReason,
      ...(e.agent !== undefined ? { 'phi_rx.agent.last': e.agent } : {}),
    });
    if (e.stopReason === 'error') {
      const last = [...e.messages].reverse().find((m): m is AssistantMessage => m.role === 'assistant');
      fail(loop.span, errorTypeOf(last?.errorMessage), last?.errorMessage);
    }
    // A tripped guardrail fails the run's span, named by the guardrail.
    if (e.stoppedBy?.kind === 'guardrail') fail(loop.span, e.stoppedBy.guardrail, `${e.stoppedBy.stage} guardrail "${e.stoppedBy.guardrail}" tripped`);
    loop.span.end(at(e.timestamp));
    this.loops.delete(e.loopId);
  }

  /** A handoff: a `handoff {to}` span in the run's (at the moment it happened), and an event on the run's span. */
  private handoff(e: EventOf<'Handoff'>): void {
    const loop = this.loops.get(e.loopId);
    if (!loop) return;
    const attributes: Attributes = { 'phi_rx.handoff.from': e.from, 'phi_rx.handoff.to': e.to, 'gen_ai.tool.name': e.toolName, 'gen_ai.tool.call.id': e.toolCallId };
    this.tracer.startSpan(`handoff ${e.to}`, { kind: SpanKind.INTERNAL, startTime: at(e.timestamp), attributes }, loop.context).end(at(e.timestamp));
    loop.span.addEvent('phi_rx.handoff', { 'phi_rx.handoff.from': e.from, 'phi_rx.handoff.to': e.to }, at(e.timestamp));
  }

  private markCallStart(loopId: string, time: number): void {
    const loop = this.loops.get(loopId);
    if (!loop) return;
    loop.callStart = time;
    loop.attempt = 0;
  }

  private modelSeen(loopId: string, message: AssistantMessage): void {
    const loop = this.loops.get(loopId);
    if (loop) loop.model = { provider: message.provider, id: message.model };
  }

  /** A retry was scheduled: the attempt that failed becomes its own failed `chat` span. */
  private failedAttempt(e: EventOf<'RetryScheduled'>): void {
    const loop = this.loops.get(e.loopId);
    if (!loop) return;
    // The event names the model (an attempt that failed before any output showed none); else the one the loop has been calling.
    const model = e.model ?? loop.model;
    const known: Attributes = model ? { 'gen_ai.provider.name': model.provider, 'gen_ai.request.model': model.id } : {};
    const span = this.tracer.startSpan(model ? `chat ${model.id}` : 'chat', {
      kind: SpanKind.CLIENT,
      startTime: at(loop.callStart),
      attributes: { 'gen_ai.operation.name': 'chat', ...known, 'phi_rx.retry.attempt': loop.attempt },
    }, loop.context);
    fail(span, e.errorKind, e.errorMessage);
    span.end(at(e.timestamp));
    this.duration.record(seconds(loop.callStart, e.timestamp), { 'gen_ai.operation.name': 'chat', ...known, 'error.type': e.errorKind });
    loop.callStart = e.timestamp + e.delayMs;
    loop.attempt = e.attempt;
  }

  /** The model gave up: its last attempt becomes a failed `chat` span; the loop span notes the fallback; the next model's call starts now. */
  private fallback(e: EventOf<'ModelFallback'>): void {
    const loop = this.loops.get(e.loopId);
    if (!loop) return;
    const errorType = errorTypeOf(e.errorMessage);
    const model: Attributes = { 'gen_ai.provider.name': e.from.provider, 'gen_ai.request.model': e.from.id };
    const span = this.tracer.startSpan(`chat ${e.from.id}`, {
      kind: SpanKind.CLIENT,
      startTime: at(loop.callStart),
      attributes: { 'gen_ai.operation.name': 'chat', ...model, 'phi_rx.retry.attempt': loop.attempt, 'phi_rx.fallback.reason': e.reason },
    }, loop.context);
    fail(span, errorType, e.errorMessage);
    span.end(at(e.timestamp));
    this.duration.record(seconds(loop.callStart, e.timestamp), { 'gen_ai.operation.name': 'chat', ...model, 'error.type': errorType });
    loop.span.addEvent('phi_rx.model_fallback', {
      'phi_rx.fallback.from': `${e.from.provider}/${e.from.id}`, 'phi_rx.fallback.to': `${e.to.provider}/${e.to.id}`, 'phi_rx.fallback.reason': e.reason,
    }, at(e.timestamp));
    loop.callStart = e.timestamp;
    loop.attempt = 0;
    loop.model = { provider: e.to.provider, id: e.to.id };
  }

  private modelCall(loopId: string, message: AssistantMessage, time: number): void {
    const loop = this.loops.get(loopId);
    if (!loop) return;
    loop.model = { provider: message.provider, id: message.model };
    const metricAttributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': message.provider,
      'gen_ai.request.model': message.model,
      'gen_ai.response.model': message.model,
    };
    const span = this.tracer.startSpan(`chat ${message.model}`, {
      kind: SpanKind.CLIENT,
      startTime: at(loop.callStart),
      attributes: {
        ...metricAttributes,
        'gen_ai.usage.input_tokens': message.usage.input,
        'gen_ai.usage.output_tokens': message.usage.output,
        'gen_ai.response.finish_reasons': [finishReasonOf(message.stopReason)],
        'phi_rx.retry.attempt': loop.attempt,
        ...(this.options.captureContent ? { 'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: message.content }]) } : {}),
      },
    }, loop.context);
    const errorType = message.stopReason === 'error' ? errorTypeOf(message.errorMessage) : message.stopReason === 'aborted' ? 'cancelled' : undefined;
    if (errorType) fail(span, errorType, message.errorMessage);
    span.end(at(time));
    this.duration.record(seconds(loop.callStart, time), { ...metricAttributes, ...(errorType ? { 'error.type': errorType } : {}) });
    this.tokenUsage.record(message.usage.input, { ...metricAttributes, 'gen_ai.token.type': 'input' });
    this.tokenUsage.record(message.usage.output, { ...metricAttributes, 'gen_ai.token.type': 'output' });
  }

  private toolStart(e: EventOf<'ToolExecutionStart'>): void {
    const loop = this.loops.get(e.loopId);
    if (!loop) return;
    const span = this.tracer.startSpan(`execute_tool ${e.toolName}`, {
      kind: SpanKind.INTERNAL,
      startTime: at(e.timestamp),
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': e.toolName,
        'gen_ai.tool.call.id': e.toolCallId,
        'gen_ai.tool.type': 'function',
        ...(this.options.captureContent ? { 'gen_ai.tool.call.arguments': JSON.stringify(e.args) } : {}),
      },
    }, loop.context);
    this.tools.set(`${e.loopId}/${e.toolCallId}`, { span, context: trace.setSpan(loop.context, span), toolName: e.toolName });
  }

  private toolEnd(e: EventOf<'ToolExecutionEnd'>): void {
    const key = `${e.loopId}/${e.toolCallId}`;
    const tool = this.tools.get(key);
    if (!tool) return;
    if (e.childLoopId) tool.span.setAttribute('phi_rx.child_loop_id', e.childLoopId);
    if (this.options.captureContent) tool.span.setAttribute('gen_ai.tool.call.result', JSON.stringify(e.result.content));
    if (e.isError) fail(tool.span, 'tool_error');
    tool.span.end(at(e.timestamp));
    this.tools.delete(key);
  }

  private parallelStart(e: EventOf<'ParallelLoopStart'>): void {
    const name = this.options.agentName;
    const span = this.tracer.startSpan(name ? `invoke_agent ${name}` : 'invoke_agent', {
      kind: SpanKind.INTERNAL,
      startTime: at(e.timestamp),
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.conversation.id': e.sessionId,
        'phi_rx.parallel.branches': e.loopIds.length,
        ...(name ? { 'gen_ai.agent.name': name } : {}),
      },
    }, ROOT_CONTEXT);
    const context = trace.setSpan(ROOT_CONTEXT, span);
    e.loopIds.forEach((loopId, index) => this.branches.set(loopId, { span, context, index }));
  }

  private parallelEnd(e: EventOf<'ParallelLoopEnd'>): void {
    const group = this.branches.get(e.selectedLoopId);
    if (!group) return;
    group.span.setAttributes({ 'phi_rx.parallel.selected_loop_id': e.selectedLoopId, 'phi_rx.parallel.selected_index': e.selectedConfigIndex });
    this.endGroup(group.span, e.timestamp);
  }

  private endGroup(span: Span, time: number, errorType?: string): void {
    if (errorType) fail(span, errorType);
    span.end(at(time));
    for (const [loopId, branch] of this.branches) if (branch.span === span) this.branches.delete(loopId);
  }
}

function fail(span: Span, errorType: string, message?: string): void {
  span.setAttribute('error.type', errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) });
}

/** `rateLimited: slow down` (how the loop words a provider failure) → `rateLimited`. */
function errorTypeOf(errorMessage: string | undefined): string {
  const kind = errorMessage?.match(/^([A-Za-z_]+):/)?.[1];
  return kind ?? '_OTHER';
}

/** The conventions' finish reasons for the loop's stop reasons. */
function finishReasonOf(stopReason: AssistantMessage['stopReason']): string {
  return stopReason === 'toolUse' ? 'tool_call' : stopReason;
}

/**
 * Event timestamps (the run's scheduler, ms since the epoch) as OpenTelemetry times. A plain
 * number would be read as a `performance.now()` offset when small, as under virtual time.
 */
const at = (ms: number): HrTime => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];

const seconds = (from: number, to: number): number => Math.max(0, to - from) / 1000;
