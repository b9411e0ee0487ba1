/**
 * `phi-rx/otel`: OpenTelemetry tracing and metrics for agent runs. Needs the optional peer
 * `@opentelemetry/api`; the root `phi-rx` entry never loads it.
 */
export { AgentTracing, type AgentTracingOptions } from './agent-tracing.js';
export { traceAgent } from './trace-agent.js';
