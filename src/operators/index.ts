// General-purpose operators: any stream in and out, usable without the loop (the loop's own stages are in ../loop/).
export * from './retry-backoff.js';
export * from './filter-input.js';
export * from './compact.js';
export * from './limit-execution.js';
export { messageEventsOf, toMessageEvents, type ToMessageEventsOptions } from './to-message-events.js';
export { dispatchTools, type DispatchToolsOptions, type SteeringCheck, TOOL_TEXTS } from './dispatch-tools.js';
export * from './guard-provider-stream.js';
export * from './mark-attempt.js';
export * from './resume-retry.js';
export * from './internal/retry-resumer.js';
export * from './partial-output.js';
export * from './request-approval.js';
export * from './internal/call-cancellations.js';
