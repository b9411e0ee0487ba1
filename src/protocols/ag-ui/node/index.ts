/** `phi-rx/ag-ui/node`: the AG-UI endpoint as a `node:http` handler ({@link agUiNodeHandler}). */
export * from './ag-ui-node-handler.js';
