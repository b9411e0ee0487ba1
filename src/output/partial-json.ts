/**
 * A tolerant parser for JSON that is still arriving: what a streamed structured answer says so far.
 *
 * What it keeps of a value cut off by the end of the text:
 * - a string: the characters so far (an escape cut in the middle, `\` or `\u00`, is left out);
 * - an object: the members whose values have started, each as far as it goes; a member whose key
 *   is cut, or that has no value yet, is left out;
 * - an array: the items so far, the last one as far as it goes;
 * - a number or `true` / `false` / `null`: nothing until something follows it, because `1` may
 *   still become `18` and a UI should never show a value the answer will not have.
 * A leading ```` ```json ```` fence is skipped. Text that cannot be the start of JSON gives `undefined`.
 *
 * @example
 * parsePartialJson('{"city":"Par');          // { value: { city: 'Par' }, complete: false }
 * parsePartialJson('{"tags":["a","b"],"n":1'); // { value: { tags: ['a', 'b'] }, complete: false }
 * parsePartialJson('{"n":1}');               // { value: { n: 1 }, complete: true }
 */
export function parsePartialJson(text: string): { value: unknown; complete: boolean } | undefined {
  const start = skipFence(text);
  if (start === undefined) return undefined;
  const parser = new PartialParser(text, start);
  try {
    const value = parser.value();
    return value === CUT ? undefined : { value, complete: !parser.cut };
  } catch (e) {
    if (e instanceof NotJson) return undefined;
    throw e;
  }
}

/** The input ended before anything of this value could be kept. */
const CUT: unique symbol = Symbol('cut');

class NotJson extends Error {}

const FENCE = /^\s*```[a-zA-Z]*\s*/;

/** Where the JSON starts: after a ```json fence if there is one; undefined while a fence is still arriving. */
function skipFence(text: string): number | undefined {
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('`')) return text.length - trimmed.length;
  const fence = FENCE.exec(text);
  // "`", "``", "```js" with nothing after it yet: the fence may still be arriving.
  if (!fence || fence[0].length === text.length) return undefined;
  return fence[0].length;
}

const LITERALS: ReadonlyArray<[string, unknown]> = [['true', true], ['false', false], ['null', null]];
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

class PartialParser {
  /** Set once the text ended inside a value. */
  cut = false;

  constructor(
    private readonly text: string,
    private at: number,
  ) {}

  value(): unknown {
    this.skipSpace();
    if (this.at >= this.text.length) return this.end();
    const c = this.text[this.at]!;
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return this.string();
    if (c === '-' || (c >= '0' && c <= '9')) return this.number();
    return this.literal();
  }

  private end(): typeof CUT {
    this.cut = true;
    return CUT;
  }

  private object(): Record<string, unknown> {
    this.at++;
    const out: Record<string, unknown> = {};
    let first = true;
    for (;;) {
      this.skipSpace();
      if (this.at >= this.text.length) return this.cutWith(out);
      if (this.text[this.at] === '}') {
        this.at++;
        return out;
      }
      if (!first) {
        this.expect(',');
        this.skipSpace();
        if (this.at >= this.text.length) return this.cutWith(out);
      }
      first = false;
      if (this.text[this.at] !== '"') throw new NotJson();
      const key = this.string();
      if (this.cut) return out; // the key itself is cut
      this.skipSpace();
      if (this.at >= this.text.length) return this.cutWith(out);
      this.expect(':');
      const value = this.value();
      if (value !== CUT) out[key] = value;
      if (this.cut) return out;
    }
  }

  private array(): unknown[] {
    this.at++;
    const out: unknown[] = [];
    for (;;) {
      this.skipSpace();
      if (this.at >= this.text.length) return this.cutWith(out);
      if (this.text[this.at] === ']') {
        this.at++;
        return out;
      }
      if (out.length > 0) this.expect(',');
      const item = this.value();
      if (item !== CUT) out.push(item);
      if (this.cut) return out;
    }
  }

  private string(): string {
    const text = this.text;
    let i = this.at + 1;
    let out = '';
    let run = i; // start of the plain characters not yet copied
    while (i < text.length) {
      const c = text[i]!;
      if (c === '"') {
        this.at = i + 1;
        return out + text.slice(run, i);
      }
      if (c !== '\\') {
        i++;
        continue;
      }
      out += text.slice(run, i);
      const next = text[i + 1];
      if (next === undefined) break; // cut right after the backslash
      if (next === 'u') {
        const hex = text.slice(i + 2, i + 6);
        if (hex.length < 4) break; // cut inside \uXXXX
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new NotJson();
        out += String.fromCharCode(parseInt(hex, 16));
        i += 6;
      } else {
        const escaped = ESCAPES[next];
        if (escaped === undefined) throw new NotJson();
        out += escaped;
        i += 2;
      }
      run = i;
    }
    // The text ended inside the string: keep what arrived, leaving out a cut escape.
    if (i >= text.length) out += text.slice(run, i);
    this.at = text.length;
    this.cut = true;
    return out;
  }

  private number(): unknown {
    NUMBER.lastIndex = this.at;
    const match = NUMBER.exec(this.text);
    const end = match ? this.at + match[0].length : this.at;
    // A number that reaches the end of the text may go on: "1" of "18", "1." of "1.5", "-" of "-2".
    let tail = end;
    while (tail < this.text.length && '.eE+-'.includes(this.text[tail]!)) tail++;
    if (tail >= this.text.length) return this.end();
    if (!match || /[.eE+\-\d]/.test(this.text[end]!)) throw new NotJson();
    this.at = end;
    return Number(match[0]);
  }

  private literal(): unknown {
    const rest = this.text.slice(this.at, this.at + 5);
    for (const [word, value] of LITERALS) {
      if (rest.startsWith(word)) {
        const after = this.text[this.at + word.length];
        // `true` at the very end: complete, but kept back like a number until something follows.
        if (after === undefined) return this.end();
        this.at += word.length;
        return value;
      }
      if (this.at + rest.length >= this.text.length && word.startsWith(rest)) return this.end();
    }
    throw new NotJson();
  }

  private cutWith<T>(value: T): T {
    this.cut = true;
    return value;
  }

  private expect(c: string): void {
    if (this.text[this.at] !== c) throw new NotJson();
    this.at++;
  }

  private skipSpace(): void {
    const text = this.text;
    while (this.at < text.length) {
      const c = text.charCodeAt(this.at);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return;
      this.at++;
    }
  }
}
