import { map } from 'rxjs';
import { type AgentMessage, type Message, toLlmMessages } from '../types/message.js';
import type { StreamRequest } from '../types/provider.js';
import type { AnyTool } from '../types/tool.js';
import { DEFAULT_CACHE_CONFIG } from '../types/config.js';
import type { LoopStage, LoopState } from './loop-state.js';

export interface BuildRequestOptions extends Omit<StreamRequest, 'messages' | 'tools' | 'thinkingLevel' | 'cacheConfig'> {
  /** The tools the model may call (their name, description and parameters are sent). */
  tools?: readonly AnyTool[];
  thinkingLevel?: StreamRequest['thinkingLevel'];
  cacheConfig?: StreamRequest['cacheConfig'];
  /** Maps the context to what the model receives (default `toLlmMessages`: extension messages are not sent). */
  convertToLlm?(messages: readonly AgentMessage[]): Message[];
}

/**
 * The loop's request stage: the request for this turn's model call, from the state's context. A
 * state whose run has ended passes through untouched.
 *
 * Contract: per input state, the state with `request` set; no events.
 *
 * ```
 * source:   --s--|
 * buildRequest({ model, systemPrompt, tools })
 * output:   --r--|            (r: { ...s, request: { model, systemPrompt, messages: s.messages as sent, tools } })
 * ```
 *
 * @example
 * state$.pipe(loopStages(buildRequest({ model, systemPrompt: 'Be brief.', tools }), callModel({ provider })));
 */
export function buildRequest(options: BuildRequestOptions): LoopStage {
  const { tools = [], convertToLlm = toLlmMessages, thinkingLevel = 'off', cacheConfig = DEFAULT_CACHE_CONFIG, ...rest } = options;
  const definitions = tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
  return map((state: LoopState): LoopState => {
    if (state.ended) return state;
    const request: StreamRequest = { ...rest, thinkingLevel, cacheConfig, tools: definitions, messages: convertToLlm(state.messages) };
    return { ...state, request };
  });
}
