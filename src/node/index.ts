/**
 * `phi-rx/node`: the parts of the core that need Node itself (child processes). Everything
 * under the root `phi-rx` entry runs anywhere JavaScript runs; this subpath does not.
 */
export { scriptHooks, runScriptHook, ScriptHookError, type ScriptHookOptions, type ScriptHookContext, type ScriptHookCommands } from '../agent/script-hooks.js';
