import type { LoopStage } from '../operators/loop-state.js';
import type { Provider } from '../types/provider.js';
import type { AnyTool } from '../types/tool.js';
import { MessageQueue } from '../sources/queues.js';
import type { AgentContext, AgentLoopConfig } from './config.js';

/**
 * The composed stages of a run, kept per config object so that the runs of one config share one
 * composition. Everything a run has of its own (ids, prompts, what triggers its first turn) rides on
 * its state (`LoopState.run`), and the stages that keep something per run (the views of its
 * messages, its tool dispatch, where its model chain stands) key it by that; so the composition is
 * a function of the config, the context's tools and system prompt, and the provider.
 *
 * Building it costs a run ~15 KB of closures and option objects that live as long as the run: with
 * hundreds of runs interleaved, that is what the young generation copies and promotes.
 *
 * A composition is used again only for what it was built from: the same config object with the
 * same fields (compared one by one: a field set anew is seen), the same tools array holding the same
 * tools (each with the same name, description and parameters), the same system prompt and the same
 * provider. A config is kept from its second run on (a config made for one run keeps nothing). A
 * config whose steering is a function gets a composition per run (its steering inbox keeps per run
 * what the function handed over).
 */
export function cachedRunStages(context: AgentContext, config: AgentLoopConfig, provider: Provider, build: () => LoopStage): LoopStage {
  if (config.steering !== undefined && !(config.steering instanceof MessageQueue)) return build();
  const kept = compositions.get(config);
  // A config's first run only marks it: a config made for one run (a per-run spread) keeps nothing more.
  if (kept === undefined) {
    compositions.set(config, SEEN);
    return build();
  }
  for (const entry of kept) if (entry.fits(context, config, provider)) return entry.stage;
  const entry = new Composition(context, config, provider, build());
  if (kept === SEEN) compositions.set(config, [entry]);
  else {
    kept.unshift(entry);
    if (kept.length > KEPT_PER_CONFIG) kept.length = KEPT_PER_CONFIG;
  }
  return entry.stage;
}

/** Compositions kept per config (one per tools array and system prompt it is run with), newest first. */
const KEPT_PER_CONFIG = 4;

/** Compositions kept per config; `SEEN` for a config that has run once (kept from its second run on). */
const compositions = new WeakMap<AgentLoopConfig, Composition[]>();
const SEEN: Composition[] = [];

/** A composition and what it was built from. */
class Composition {
  private readonly keys: string[];
  private readonly values: unknown[];
  private readonly toolList: readonly AnyTool[];
  /** Each tool, its name, description and parameters, in order. */
  private readonly toolFields: unknown[];
  private readonly systemPrompt: string;

  constructor(
    context: AgentContext,
    config: AgentLoopConfig,
    private readonly provider: Provider,
    readonly stage: LoopStage,
  ) {
    this.keys = Object.keys(config);
    this.values = this.keys.map((k) => config[k as keyof AgentLoopConfig]);
    this.toolList = context.tools;
    this.toolFields = fieldsOf(context.tools);
    this.systemPrompt = context.systemPrompt;
  }

  fits(context: AgentContext, config: AgentLoopConfig, provider: Provider): boolean {
    if (provider !== this.provider || context.tools !== this.toolList || context.systemPrompt !== this.systemPrompt) return false;
    const { keys, values } = this;
    let count = 0;
    for (const key in config) {
      if (count >= keys.length || key !== keys[count] || config[key as keyof AgentLoopConfig] !== values[count]) return false;
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

function fieldsOf(tools: readonly AnyTool[]): unknown[] {
  const out: unknown[] = [];
  for (const tool of tools) out.push(tool, tool.name, tool.description, tool.parameters);
  return out;
}
