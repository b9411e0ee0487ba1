// What the phi-rx contenders share: the bundled sources, the model provider, the tool, and a
// consumer that counts what it is delivered.
import { pathToFileURL } from 'node:url';
import { PROMPT, SYSTEM_PROMPT, TOOL_DESCRIPTION, TOOL_NAME, modelParts, newCounts, runAgents, toolOutput } from '../workload.mjs';

/**
 * phi-rx's own sources, bundled by run.mjs (plain JS: no TypeScript loader in the measured process).
 * `PHI_RX_BUNDLE` points at another bundle (run.mjs's `--baseline`: an older build measured in the same run).
 */
export const phi = await import(
  process.env.PHI_RX_BUNDLE ? pathToFileURL(process.env.PHI_RX_BUNDLE).href : new URL('../../.tmp/bench/phi-rx.mjs', import.meta.url).href
);

/**
 * What the contenders use, over one bundle `phi`: the default bundle's below (the named exports);
 * `ab.mjs` makes a second set over another bundle, to measure two builds in one process.
 */
export function phiCommon(phi) {
  /**
   * The provider over the workload's async generator (modelParts): every part arrives after an await,
   * as from a socket, and is turned into phi-rx's stream events by the message builder every real
   * provider uses. Stateless, as a real provider is: each call plays the turn the request's
   * conversation is at (its number of assistant messages), so one provider (and one config) serves
   * every agent. Unsubscribing stops the generator.
   */
  const providers = new Map();
  function provider(workload) {
    let shared = providers.get(workload);
    if (shared) return shared;
    shared = (request) =>
      new phi.Observable((subscriber) => {
        let turn = 0;
        for (const m of request.messages) if (m.role === 'assistant') turn++;
        let ids = 0;
        const parts = modelParts(workload, turn, () => `call_${turn}_${++ids}`);
        const builder = new phi.AssistantMessageBuilder(request.model.id, request.model.provider, Date.now());
        (async () => {
          subscriber.next(builder.start());
          for await (const part of parts) {
            if (subscriber.closed) return;
            if (part.type === 'textDelta') subscriber.next(builder.text(part.delta));
            else if (part.type === 'toolStart') subscriber.next(builder.toolCallStart(part.id, part.name, part.id));
            else subscriber.next(builder.toolCallDelta(part.delta, part.id));
          }
          subscriber.next(builder.finish(builder.hasToolCalls() ? 'toolUse' : 'stop'));
          subscriber.complete();
        })().catch((error) => subscriber.error(error));
        return () => void parts.return(undefined);
      });
    providers.set(workload, shared);
    return shared;
  }

  /** The model every agent uses. */
  const model = phi.scriptedModel();

  /**
   * The loop config every agent shares, as a server shares its model and provider among its users
   * (made once per workload: `agentLoop` composes a config's stages once, for all its runs).
   */
  const configs = new Map();
  function config(workload) {
    let shared = configs.get(workload);
    if (!shared) configs.set(workload, (shared = { model, provider: provider(workload) }));
    return shared;
  }

  /** The counts of the run in progress; the tool below bumps `executed` in them. */
  let current;

  /**
   * The tool, defined once per process and shared by every run and agent, as a server would (its
   * zod schema is converted to JSON Schema once, not on every run); it counts into `counts`.
   */
  const LOOKUP = phi.defineTool({
    name: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    parameters: phi.z.object({ path: phi.z.string(), line: phi.z.number() }),
    execute: (args) => {
      current.executed++;
      return toolOutput(args);
    },
  });

  function lookupTool(counts) {
    current = counts;
    return LOOKUP;
  }

  function context(tools) {
    return { systemPrompt: SYSTEM_PROMPT, messages: [], tools };
  }

  function prompts() {
    return [phi.userMessage(PROMPT)];
  }

  /** Counts one phi-rx event. */
  function count(counts, event) {
    counts.events++;
    switch (event.type) {
      case 'MessageUpdate':
        if (event.delta.type === 'text') counts.textDeltas++;
        else if (event.delta.type === 'toolCall' && event.delta.delta !== '') counts.argDeltas++;
        return;
      case 'ToolExecutionEnd':
        counts.toolExecutions++;
        return;
      case 'MessageEnd':
        if (event.message.role === 'toolResult') counts.toolResults++;
        return;
    }
  }

  /** Subscribes and resolves when the run completes (rejects on error). */
  function consume(events$, counts) {
    return new Promise((resolve, reject) => {
      events$.subscribe({ next: (event) => count(counts, event), error: reject, complete: resolve });
    });
  }

  return { phi, provider, model, config, lookupTool, context, prompts, count, consume };
}

const defaults = phiCommon(phi);
export const { provider, model, config, lookupTool, context, prompts, count, consume } = defaults;

/**
 * A phi-rx contender from what one simulated user does (`perAgent`, given the bundle's parts `c`,
 * the workload, the run's counts and its tools): `run(workload)` over the default bundle, and
 * `runWith(c, workload)` over any (`ab.mjs` runs two).
 */
export function contender(perAgent) {
  const runWith = (c, workload) => {
    const counts = newCounts();
    // The tool is defined once per process and shared by every run and agent, as a server would.
    const tools = [c.lookupTool(counts)];
    return runAgents(workload, counts, () => perAgent(c, workload, counts, tools));
  };
  return { run: (workload) => runWith(defaults, workload), runWith };
}
