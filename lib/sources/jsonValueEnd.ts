/**
 * Finds where one JSON value ends in text that arrives in pieces: it tracks nesting depth, strings
 * and escapes, and nothing else. It does not validate (the text it delimits is handed to
 * `JSON.parse`, which does); it only has to be right about where a valid value ends, and never
 * call a value ended inside a string.
 *
 * Cost: inside strings, which are most of a Kubernetes object's text, it jumps from quote to quote
 * with the native `indexOf`; it looks at every character only between strings, which makes it
 * cheaper than a loop over every character, and than `JSON.parse` itself
 * (docs/performance-notes.md, "Lists in one response").
 */

/** The character codes of JSON's structure, shared with the list decoder. */
export const QUOTE = 0x22;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
export const COMMA = 0x2c;
export const COLON = 0x3a;

/** The four whitespace characters JSON allows between tokens. */
export function isJsonWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/** True for a character that ends a number or literal (`12`, `true`): what may follow a value. */
function endsScalar(code: number): boolean {
  return code === COMMA || code === CLOSE_BRACE || code === CLOSE_BRACKET || code === COLON || code === QUOTE || code === OPEN_BRACE || code === OPEN_BRACKET || isJsonWhitespace(code);
}

/**
 * The end of one JSON value, found piece by piece. `start` it at the value's first character,
 * then `scan` each piece; `scan` returns the index just past the value's last character, or -1
 * when the value goes on past the piece.
 *
 * ## Example
 * ```ts
 * const end = new JsonValueEnd();
 * end.start();
 * end.scan('{"a":"}', 0); // -1: still inside the string
 * end.scan('"}, 2', 0);   // 2: the object ended before the comma
 * ```
 */
export class JsonValueEnd {
  private depth = 0;
  private inString = false;
  /** The last piece ended on a backslash inside a string: the next piece's first character is escaped. */
  private escapePending = false;
  private scalar = false;
  private started = false;
  /**
   * The next backslash at or after some position of `backslashText`: most pieces have none, so
   * one search serves every string of the piece. (Strings compare by value; two pieces with the
   * same text have the same backslashes, and distinct pieces differ within a few characters.)
   */
  private backslashText: string | undefined;
  private backslashFrom = 0;
  private backslashAt = 0;

  /** Starts a new value: the next character scanned is its first. */
  start(): void {
    this.depth = 0;
    this.inString = false;
    this.escapePending = false;
    this.scalar = false;
    this.started = false;
  }

  /** Scans `text` from `from`; returns the index just past the value's end, or -1 if it goes on. */
  scan(text: string, from: number): number {
    const length = text.length;
    let i = from;
    if (i >= length) return -1;
    if (!this.started) {
      this.started = true;
      const first = text.charCodeAt(i);
      if (first === OPEN_BRACE || first === OPEN_BRACKET) {
        this.depth = 1;
        i++;
      } else if (first === QUOTE) {
        this.inString = true;
        i++;
      } else {
        this.scalar = true;
      }
    }
    if (this.scalar) {
      for (; i < length; i++) if (endsScalar(text.charCodeAt(i))) return i;
      return -1;
    }
    if (this.escapePending) {
      this.escapePending = false;
      i++;
    }
    while (i < length) {
      if (this.inString) {
        let quote = text.indexOf('"', i);
        if (quote === -1) quote = length;
        const backslash = this.nextBackslash(text, i);
        if (backslash < quote) {
          // An escape: step over the escaped character (which may be a quote), maybe in the next piece.
          if (backslash + 1 >= length) {
            this.escapePending = true;
            return -1;
          }
          i = backslash + 2;
          continue;
        }
        if (quote === length) return -1;
        this.inString = false;
        i = quote + 1;
        if (this.depth === 0) return i;
        continue;
      }
      const code = text.charCodeAt(i);
      if (code === QUOTE) this.inString = true;
      else if (code === OPEN_BRACE || code === OPEN_BRACKET) this.depth++;
      else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
        if (--this.depth === 0) return i + 1;
      }
      i++;
    }
    return -1;
  }

  private nextBackslash(text: string, from: number): number {
    // Valid for a search from anywhere between where it searched from and what it found.
    if (this.backslashText !== text || this.backslashAt < from || this.backslashFrom > from) {
      const at = text.indexOf('\\', from);
      this.backslashText = text;
      this.backslashFrom = from;
      this.backslashAt = at === -1 ? Number.POSITIVE_INFINITY : at;
    }
    return this.backslashAt;
  }
}
