/**
 * `phi-rx/ag-ui`: phi-rx agents for AG-UI clients (CopilotKit, assistant-ui, the AG-UI Dojo,
 * `@ag-ui/client`). The mapping ({@link agUiEvents}, {@link toAgUiMessages}, {@link fromAgUiMessages})
 * needs no AG-UI package; the handlers need `@ag-ui/encoder`, {@link createAgUiAgent} `@ag-ui/client`
 * (optional peers). The `node:http` handler is `phi-rx/ag-ui/node`.
 */
export * from './ag-ui-event.js';
export * from './to-ag-ui.js';
export * from './json-patch.js';
export * from './to-ag-ui-messages.js';
export * from './from-ag-ui-messages.js';
export * from './run-ag-ui.js';
export * from './ag-ui-agent.js';
export * from './ag-ui-handler-options.js';
export * from './ag-ui-fetch-handler.js';
