import type { ResponseFormat } from '../types/provider.js';

/*
 * Structured output on APIs without a response format (Anthropic Messages, Bedrock Converse): the
 * schema is sent as one more tool, the "output tool", and the request forces a tool call. The
 * reader reports the output tool's arguments as the message's text, so the loop reads the answer
 * the same way for every provider (and `partialOutput` sees it stream).
 */

/** What the model reads about the output tool. */
export function outputToolDescription(format: ResponseFormat): string {
  const what = format.description ? ` ${format.description}` : '';
  return `Give your final answer by calling this tool: its arguments are the answer.${what}`;
}

/**
 * How a forced-tool request picks the tool: the output tool itself when it is the only tool, any
 * tool when there are others (so they still work), none when thinking is on (APIs refuse forced
 * tool use with thinking; the model is asked through the tool's description).
 */
export function outputToolChoice(otherTools: number, thinking: boolean): 'output' | 'any' | 'auto' {
  if (thinking) return 'auto';
  return otherTools === 0 ? 'output' : 'any';
}
