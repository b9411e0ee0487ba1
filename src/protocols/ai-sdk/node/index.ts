export { UIMessageStreamHub, type AuthorizeChat, type ChatAuthorizeContext, type ChatRequest, type ChatRun, type UIMessageStreamHubOptions } from './ui-message-stream-hub.js';
export type { ChatRunControls, ChatRunLog, Segment } from './chat-run-log.js';
