/**
 * phi-rx agents as A2A agents, and A2A agents as phi-rx tools (`phi-rx/a2a`), with the official
 * `@a2a-js/sdk` (A2A 1.0). The SDK — and Express, for the server — are optional peer dependencies:
 * `npm install @a2a-js/sdk express`. They load on first use.
 *
 * @example
 * import { a2aServer } from 'phi-rx/a2a';
 * const server = await a2aServer({ model }, { card: { name: 'Helper', description: 'Answers questions' }, authorize: 'allow-all' });
 * console.log(await server.listen(8080));
 */
export { a2aServer } from './a2a-server.js';
export { a2aAgentTool } from './a2a-agent-tool.js';
export type { A2aAgentToolOptions, A2aToolDetails } from './a2a-agent-tool.js';
export type { A2aAuthorize, A2aAuthorizeContext, A2aServer, A2aServerOptions } from './a2a-server.js';
export type { A2aCardOptions } from './a2a-card.js';
export type { A2aPushOptions } from './push-notifications.js';
export { sessionIdOfContext } from './context-agents.js';
export type { A2aAgentSource } from './context-agents.js';
export { readApproval } from './a2a-executor.js';
export { TASK_STATE, PHI_RX_KEY, a2aMessageOf, dataPart, textPart, eventIdOf, textOfParts, dataOfParts } from './a2a-parts.js';
export { toA2aUpdates, endUpdates } from './to-a2a.js';
export type { A2aTaskIds } from './to-a2a.js';
export { MissingPeerDependencyError } from '../../util/optional-peer.js';
