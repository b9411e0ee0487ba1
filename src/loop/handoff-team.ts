import type { AgentMessage } from '../types/message.js';
import type { ModelConfig, Provider } from '../types/provider.js';
import type { AnyTool } from '../types/tool.js';
import type { ThinkingLevel } from '../types/config.js';
import { AgentError } from '../types/errors.js';
import { checkTools } from '../tools/check-tools.js';
import { defaultProviderRegistry } from '../providers/registry.js';
import type { SchedulerLike } from 'rxjs';
import type { AgentLoopConfig } from './config.js';
import type { LoopStage } from './kernel/loop-state.js';
import { activeAgents, agentTurns, byActiveAgent, namingAgents } from './stages/agent-turns.js';

/**
 * An agent a run can hand the conversation to (`handoff(agent)`), or run as a tool (`agentTool(agent)`):
 * its name, what it is told, what it can do, and the model it runs on. What it leaves out it takes
 * from the run that hands to it (model, provider, settings); tools and system prompt are its own
 * (none and empty when absent).
 */
export interface AgentSpec {
  /** Its name in events (`Handoff.from`/`to`, `AgentEnd.agent`) and in the handoff tool's default name; unique in a run. */
  readonly name: string;
  /** What it is for: the default handoff and agent-tool descriptions say it. */
  readonly description?: string;
  readonly systemPrompt?: string;
  /** Its tools, handoffs to other agents among them. */
  readonly tools?: readonly AnyTool[];
  /** Its model (default: the run's; a model of its own leaves the run's fallback chain behind). */
  readonly model?: ModelConfig;
  /** The Provider serving `model` (default: the run's for the run's model, else the provider registry's). */
  readonly provider?: Provider;
  readonly thinkingLevel?: ThinkingLevel;
  readonly maxTokens?: number;
  readonly temperature?: number;
}

/** What a handoff's `inputFilter` gets: who hands to whom, with which arguments, and the context as the handoff left it. */
export interface HandoffInput {
  readonly from: string;
  readonly to: string;
  readonly arguments: Record<string, unknown>;
  /** The working context: the history and what the run added, the handoff's call and result last. */
  readonly messages: readonly AgentMessage[];
}

/** Which messages the next agent sees (the run's records keep them all: `AgentEnd.messages` is unchanged). */
export type HandoffInputFilter = (input: HandoffInput) => readonly AgentMessage[];

/** What a handoff tool carries besides being a tool: the agent it hands to, and its filter. */
export interface HandoffTarget {
  readonly agent: AgentSpec;
  readonly inputFilter?: HandoffInputFilter;
}

/** A tool that hands the conversation to another agent (what `handoff()` makes). */
export type HandoffTool = AnyTool & { readonly handoff: HandoffTarget };

/** Whether a tool is a handoff (made by `handoff()`). */
export function isHandoffTool(tool: AnyTool): tool is HandoffTool {
  const target = (tool as { handoff?: unknown }).handoff;
  return typeof target === 'object' && target !== null && typeof (target as HandoffTarget).agent === 'object';
}

/** The agent a tool runs or hands to (`handoff()`, `agentTool()`), if any. */
export function agentOfTool(tool: AnyTool): AgentSpec | undefined {
  if (isHandoffTool(tool)) return tool.handoff.agent;
  const agent = (tool as { agent?: unknown }).agent;
  return typeof agent === 'object' && agent !== null && typeof (agent as AgentSpec).name === 'string' ? (agent as AgentSpec) : undefined;
}

/**
 * The tools a run can come to use: its own, those of the agents its handoffs and agent tools lead
 * to, and theirs in turn (what decides, say, whether the run needs an approval channel).
 */
export function reachableTools(tools: readonly AnyTool[]): AnyTool[] {
  const seen = new Set<AnyTool>();
  const agents = new Set<AgentSpec>();
  const visit = (list: readonly AnyTool[]): void => {
    for (const tool of list) {
      if (seen.has(tool)) continue;
      seen.add(tool);
      const agent = agentOfTool(tool);
      if (agent && !agents.has(agent)) {
        agents.add(agent);
        visit(agent.tools ?? []);
      }
    }
  };
  visit(tools);
  return [...seen];
}

/** One agent of a run's team: what its turns are composed of, and where its handoff tools lead. */
export interface TeamMember {
  readonly name: string;
  readonly tools: readonly AnyTool[];
  readonly systemPrompt: string;
  readonly config: AgentLoopConfig;
  readonly provider: Provider;
  /** Its handoff tools by name: the agent each hands to, and the filter. */
  readonly handoffs: ReadonlyMap<string, { readonly to: string; readonly inputFilter?: HandoffInputFilter }>;
}

/** The agent a run starts with when it names none (`config.agentName`). */
export const MAIN_AGENT = 'main';

/**
 * The agents a run can reach through handoff tools, by name, starting from its own (named
 * `config.agentName`, default `main`, with the context's tools and system prompt); `undefined` when
 * its tools hand off to no one. A handoff to an agent named as the run's own hands back to it (as
 * the run defines it: the context's tools and prompt, the config's model). Each agent's tools are checked as a run's are; two different agents
 * with one name are bad input (`AgentError('InvalidConfig')`).
 */
export function handoffTeam(tools: readonly AnyTool[], systemPrompt: string, config: AgentLoopConfig, provider: Provider): ReadonlyMap<string, TeamMember> | undefined {
  if (!tools.some(isHandoffTool)) return undefined;
  const root = config.agentName ?? MAIN_AGENT;
  const team = new Map<string, TeamMember>();
  const specs = new Map<string, AgentSpec | undefined>([[root, undefined]]);
  const add = (name: string, own: readonly AnyTool[], prompt: string, memberConfig: AgentLoopConfig, memberProvider: Provider): void => {
    const handoffs = new Map<string, { to: string; inputFilter?: HandoffInputFilter }>();
    team.set(name, { name, tools: own, systemPrompt: prompt, config: memberConfig, provider: memberProvider, handoffs });
    for (const tool of own) {
      if (!isHandoffTool(tool)) continue;
      const agent = tool.handoff.agent;
      checkSpec(agent, `agent "${name}", tool "${tool.name}"`);
      handoffs.set(tool.name, { to: agent.name, ...(tool.handoff.inputFilter ? { inputFilter: tool.handoff.inputFilter } : {}) });
      if (agent.name === root) continue; // back to the run's own agent, as the run defines it
      if (specs.has(agent.name)) {
        if (specs.get(agent.name) !== agent) throw invalid(`two different agents are named "${agent.name}" (agent names are unique in a run)`);
        continue;
      }
      specs.set(agent.name, agent);
      const targetTools = agent.tools ?? [];
      checkTools(targetTools);
      add(agent.name, targetTools, agent.systemPrompt ?? '', memberConfigOf(agent, config), agent.provider ?? providerOf(agent, config, provider));
    }
  };
  add(root, tools, systemPrompt, config, provider);
  return team;
}

/** The loop config of an agent's turns: the run's, with the agent's model and settings. */
function memberConfigOf(agent: AgentSpec, config: AgentLoopConfig): AgentLoopConfig {
  const own: Partial<AgentLoopConfig> = {};
  if (agent.thinkingLevel !== undefined) own.thinkingLevel = agent.thinkingLevel;
  if (agent.maxTokens !== undefined) own.maxTokens = agent.maxTokens;
  if (agent.temperature !== undefined) own.temperature = agent.temperature;
  if (!agent.model) return { ...config, ...own };
  const { models: _chain, provider: _provider, ...rest } = config; // the run's chain and provider serve the run's model
  return { ...rest, ...own, model: agent.model };
}

function providerOf(agent: AgentSpec, config: AgentLoopConfig, provider: Provider): Provider {
  if (!agent.model || sameModel(agent.model, config.model)) return provider;
  return defaultProviderRegistry().resolve(agent.model);
}

function sameModel(a: ModelConfig, b: ModelConfig): boolean {
  return a.provider === b.provider && a.id === b.id && a.api === b.api;
}

function checkSpec(agent: AgentSpec, at: string): void {
  if (typeof agent.name !== 'string' || agent.name === '') throw invalid(`${at}: the agent it hands to needs a name (a non-empty string)`);
}

function invalid(reason: string): AgentError {
  return new AgentError('InvalidConfig', `handoffs: ${reason}`);
}

/** A team's turn, its answer to calls left open (each the active agent's), and what names the agents on the run's AgentStart and AgentEnd. */
export interface TeamStages {
  readonly turn: LoopStage;
  readonly open: LoopStage;
  readonly named: (run: LoopStage) => LoopStage;
}

/**
 * The stages of a run with handoffs: each agent's turn and open-call answer built by `build` (the
 * loop's own composition, with the agent's tools, prompt, config and provider), run as the active
 * agent's; see `agentTurns`.
 */
export function teamStages(
  team: ReadonlyMap<string, TeamMember>, root: string, scheduler: SchedulerLike, build: (member: TeamMember) => { turn: LoopStage; open: LoopStage },
): TeamStages {
  const active = activeAgents(root);
  const turns = new Map<string, LoopStage>();
  const opens = new Map<string, LoopStage>();
  for (const member of team.values()) {
    const built = build(member);
    turns.set(member.name, built.turn);
    opens.set(member.name, built.open);
  }
  return { turn: agentTurns(turns, { team, active, scheduler }), open: byActiveAgent(opens, active), named: (run) => namingAgents(run, active) };
}
