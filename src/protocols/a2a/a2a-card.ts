import type { AgentCard, AgentSkill } from '@a2a-js/sdk';
import type { AnyTool } from '../../types/tool.js';

/** What the agent card says about the agent (the rest — interfaces, capabilities, skills of the tools — a2aServer fills in). */
export interface A2aCardOptions {
  /** The agent's name. */
  name: string;
  /** What the agent does: the card's description and the description of its main skill. */
  description: string;
  /** The agent's version (default `1.0.0`). */
  version?: string;
  /**
   * The public base URL of the server, e.g. `https://agents.example.com` (the card names its
   * endpoints with it). Default: the address `listen()` got. Required when you serve with `handle()`.
   */
  url?: string;
  /** Example requests for the main skill. */
  examples?: string[];
  /** More skills to list (besides the main skill and one per tool). */
  skills?: Array<Partial<AgentSkill> & Pick<AgentSkill, 'id' | 'name' | 'description'>>;
  /** List one skill per tool (default true). */
  toolSkills?: boolean;
  provider?: { organization: string; url: string };
  documentationUrl?: string;
  /** How clients authenticate (the card's `securitySchemes`), e.g. `{ bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { scheme: 'Bearer', description: '', bearerFormat: '' } } } }`. */
  securitySchemes?: AgentCard['securitySchemes'];
  securityRequirements?: AgentCard['securityRequirements'];
}

/** Where the endpoints are, relative to the base URL. */
export interface A2aRoutes {
  readonly card: string;
  readonly jsonRpc: string;
  readonly rest: string;
}

/**
 * The agent card: the main skill from the card's name and description, one skill per tool (its
 * name, label and description), JSON-RPC and HTTP+JSON interfaces speaking A2A 1.0, streaming on.
 */
export function buildAgentCard(options: A2aCardOptions, tools: readonly AnyTool[], routes: A2aRoutes, pushNotifications: boolean): AgentCard {
  checkCardOptions(options);
  const skill = (s: Partial<AgentSkill> & Pick<AgentSkill, 'id' | 'name' | 'description'>): AgentSkill => ({
    tags: [], examples: [], inputModes: ['text/plain', 'application/json'], outputModes: ['text/plain', 'application/json'], securityRequirements: [], ...s,
  });
  const skills: AgentSkill[] = [
    skill({ id: slug(options.name), name: options.name, description: options.description, tags: ['agent'], examples: options.examples ?? [] }),
    ...(options.toolSkills === false ? [] : tools.map((t) => skill({ id: `tool-${t.name}`, name: t.label || t.name, description: t.description, tags: ['tool'] }))),
    ...(options.skills ?? []).map(skill),
  ];
  return {
    name: options.name,
    description: options.description,
    supportedInterfaces: [],
    provider: options.provider,
    version: options.version ?? '1.0.0',
    ...(options.documentationUrl ? { documentationUrl: options.documentationUrl } : {}),
    capabilities: { streaming: true, pushNotifications, extensions: [], extendedAgentCard: false },
    securitySchemes: options.securitySchemes ?? {},
    securityRequirements: options.securityRequirements ?? [],
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills,
    signatures: [],
  };
}

/** Fills in the card's interfaces once the base URL is known. */
export function setCardUrl(card: AgentCard, baseUrl: string, routes: A2aRoutes): void {
  const base = baseUrl.replace(/\/+$/, '');
  card.supportedInterfaces.splice(0, card.supportedInterfaces.length,
    { url: `${base}${routes.jsonRpc}`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    { url: `${base}${routes.rest}`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
  );
}

function checkCardOptions(options: A2aCardOptions): void {
  const o = options as Partial<A2aCardOptions> | undefined;
  if (typeof o !== 'object' || o === null) throw new TypeError('a2aServer: options.card is required: { name, description, url? }');
  if (typeof o.name !== 'string' || o.name.trim() === '') throw new TypeError(`a2aServer: options.card.name must be a non-empty string, got ${JSON.stringify(o.name)}`);
  if (typeof o.description !== 'string' || o.description.trim() === '') throw new TypeError('a2aServer: options.card.description must say what the agent does (a non-empty string)');
  if (o.url !== undefined && !/^https?:\/\/[^/]+/.test(o.url)) throw new TypeError(`a2aServer: options.card.url must be an http(s) base URL, got ${JSON.stringify(o.url)}`);
}

function slug(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'agent';
}
