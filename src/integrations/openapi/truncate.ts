/**
 * The longest prefix of `bytes` of at most `max` bytes that does not split a UTF-8 character,
 * decoded. (Cutting inside a multi-byte character would put U+FFFD in front of the model.)
 */
export function truncateUtf8(bytes: Uint8Array, max: number): { text: string; truncated: boolean } {
  const decoder = new TextDecoder('utf-8');
  if (bytes.length <= max) return { text: decoder.decode(bytes), truncated: false };
  let end = max;
  // bytes[end] is the first byte left out; a continuation byte (10xxxxxx) there means the
  // character it belongs to started earlier, so drop that character's lead bytes too.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return { text: decoder.decode(bytes.subarray(0, end)), truncated: true };
}
