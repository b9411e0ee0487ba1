export { uiMessageChunks, type UIMessageChunksOptions } from './to-ui-message-chunks.js';
export { finishReasonOf } from './ui-chunk-mapper.js';
export type { PhiDataChunk, ProviderMetadata, UIFinishReason, UIMessageChunk, UIMessageChunkType } from './ui-message-chunk.js';
export type { UIMessage, UIMessagePart, UIToolPart, UIToolState } from './ui-message.js';
export { isUIToolPart, uiToolName } from './ui-message.js';
export { fromUIMessages, type FromUIMessagesOptions } from './from-ui-messages.js';
export { toUIMessages, type ToUIMessagesOptions } from './to-ui-messages.js';
export {
  encodeUIMessageChunk,
  pipeUIMessageStreamToResponse,
  toUIMessageStreamResponse,
  UI_MESSAGE_STREAM_DONE,
  UI_MESSAGE_STREAM_HEADERS,
  type UIMessageStreamResponseInit,
  type WritableResponse,
} from './ui-message-stream.js';
export { agentChatRun, type ChatAgent } from './agent-chat-run.js';
