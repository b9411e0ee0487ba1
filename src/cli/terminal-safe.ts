/**
 * Control characters a terminal would act on: C0 but `\n` and `\t`, DEL, and C1 (`\x9b` is CSI,
 * `\x9d` OSC on terminals that read 8-bit controls).
 */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * Text from a model, a tool or a session file made safe to write to a terminal: every control
 * character but `\n` and `\t` is shown as a visible picture (ESC as `␛`, BEL as `␇`, C1 as `�`),
 * so no escape sequence reaches the terminal, whatever it would do (OSC 0 setting the window
 * title, OSC 52 writing the clipboard, CSI clearing the screen or moving the cursor, `\r`
 * overwriting a line). Character by character, so a sequence split across two streamed deltas is
 * neutralised all the same; the sequence's printable rest stays visible, which shows the reader
 * that something was there. `--json` output is not passed through here (JSON escapes them).
 *
 * @example
 * terminalSafe('hi\x1b]0;pwned\x07') // 'hi␛]0;pwned␇'
 */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    if (code === 0x7f) return '\u2421';
    return '\ufffd';
  });
}

/**
 * A value as one line of JSON that is terminal-safe and still exact: JSON escapes C0 inside strings
 * already; DEL and C1 are escaped here as `\u00XX` too, so the line parses back to the same value.
 *
 * @example
 * jsonLine({ text: '\x9b2J' }) // '{"text":"\\u009b2J"}'
 */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(/[\x7f-\x9f]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
}
