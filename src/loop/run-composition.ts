import type { LoopStage } from './kernel/loop-state.js';
import type { Provider } from '../types/provider.js';
import type { AnyTool } from '../types/tool.js';
import type { AgentContext, AgentLoopConfig } from './config.js';

/**
 * The composed stages an agent definition keeps for its runs (see `defineAgent`): built by the
 * first run and taken by every later run that fits, so that a server's thousands of conversations
 * share one composition instead of each building its own (~10 KB of closures and option objects that
 * live as long as a run, which the young generation copies and promotes when hundreds of runs are
 * interleaved). A plain `agentLoop` call keeps nothing: it composes its run for itself.
 *
 * Everything a run has of its own (ids, prompts, the trigger of its first turn, its abort signal,
 * steering and follow-up queues, call cancellations and approval) rides on its state
 * (`LoopState.run`), and the stages that keep something per run key it by that; so a composition is
 * a function of the config's other fields, the context's tools and system prompt, and the provider.
 * A composition serves a run whose config has the same fields in the same order, each the same value
 * (the same object: `signal`, `steering`, `followUp`, `cancelToolCalls` and `approval` only need to
 * be set alike, their values are the run's), the same tools in the same order (each with the same
 * name, description and parameters), the same system prompt and the same provider: a session whose
 * options were changed (another tool, model or hook) gets a composition of its own. Up to `max`
 * compositions are kept, the most recently used first, and of those only one that no later run has
 * used (a session changed for one conversation keeps one conversation's values alive, not `max`).
 */
export class RunCompositions {
  private readonly kept: Composition[] = [];

  constructor(private readonly max = 4) {}

  /** The composition for this run: a kept one that fits, or `build`'s, kept for the runs after it. */
  stage(context: AgentContext, config: AgentLoopConfig, provider: Provider, build: (tools: readonly AnyTool[]) => LoopStage): LoopStage {
    const kept = this.kept;
    for (let i = 0; i < kept.length; i++) {
      const entry = kept[i]!;
      if (!entry.fits(context, config, provider)) continue;
      entry.used = true;
      if (i > 0) kept.unshift(...kept.splice(i, 1)); // the most recently used first: the last to go
      return entry.stage;
    }
    // The composition's own copy of the tools: changing the array in place later changes no composition.
    const tools = context.tools.slice();
    const entry = new Composition(tools, context.systemPrompt, config, provider, build(tools));
    const unused = kept.findIndex((e) => !e.used);
    if (unused >= 0) kept.splice(unused, 1);
    kept.unshift(entry);
    if (kept.length > this.max) kept.length = this.max;
    return entry.stage;
  }

  /** How many compositions are kept. */
  get size(): number {
    return this.kept.length;
  }
}

/** The config fields a run takes as its own (`RunInfo`): compositions compare whether they are set, not their values. */
const RUN_FIELDS = new Set<string>(['signal', 'steering', 'followUp', 'cancelToolCalls', 'approval']);

/** Stands for a run field that is set. */
const SET = Symbol('set');

/** A composition and what it was built from. */
class Composition {
  private readonly keys: string[] = [];
  private readonly values: unknown[] = [];
  /** Each tool, its name, description and parameters, in order. */
  private readonly toolFields: unknown[];
  /** Whether a run after the one it was built for used it. */
  used = false;

  constructor(
    tools: readonly AnyTool[],
    private readonly systemPrompt: string,
    config: AgentLoopConfig,
    private readonly provider: Provider,
    readonly stage: LoopStage,
  ) {
    for (const key in config) {
      this.keys.push(key);
      this.values.push(valueOf(config, key));
    }
    this.toolFields = fieldsOf(tools);
  }

  fits(context: AgentContext, config: AgentLoopConfig, provider: Provider): boolean {
    if (provider !== this.provider || context.systemPrompt !== this.systemPrompt) return false;
    const { keys, values } = this;
    let count = 0;
    for (const key in config) {
      if (count >= keys.length || key !== keys[count] || valueOf(config, key) !== values[count]) return false;
      count++;
    }
    if (count !== keys.length) return false;
    const tools = context.tools;
    const fields = this.toolFields;
    if (tools.length * 4 !== fields.length) return false;
    for (let i = 0, at = 0; i < tools.length; i++, at += 4) {
      const tool = tools[i]!;
      if (tool !== fields[at] || tool.name !== fields[at + 1] || tool.description !== fields[at + 2] || tool.parameters !== fields[at + 3]) return false;
    }
    return true;
  }
}

/** A config field's value as a composition compares it: a run field only as set or not. */
function valueOf(config: AgentLoopConfig, key: string): unknown {
  const value = config[key as keyof AgentLoopConfig];
  return RUN_FIELDS.has(key) && value !== undefined ? SET : value;
}

function fieldsOf(tools: readonly AnyTool[]): unknown[] {
  const out: unknown[] = [];
  for (const tool of tools) out.push(tool, tool.name, tool.description, tool.parameters);
  return out;
}
