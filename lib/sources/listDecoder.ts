import { ProtocolError } from '../base/errors';
import { HeldText } from './heldText';
import { CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, isJsonWhitespace, JsonValueEnd, OPEN_BRACE, OPEN_BRACKET, QUOTE } from './jsonValueEnd';
import { excerptOf } from './statusError';

/** Options of a {@link ListDecoder}. */
export interface ListDecoderOptions {
  /** The request path, for error messages. */
  readonly path: string;
  /** Items are parsed in batches of at least this many characters (one `JSON.parse` each). */
  readonly batchChars: number;
  /** The longest text held for one member, one item or a body that is not an object. */
  readonly maxChars: number;
  /** Each batch of items but the last, parsed, as soon as it is complete. */
  readonly onItems: (items: unknown[]) => void;
  /** When the items array opens: the list's members written before it (kind, apiVersion, metadata). */
  readonly onItemsStart?: (head: Record<string, unknown>) => void;
}

// Where the top level of the body is.
const START = 0; // before the body's first token
const KEY_OR_END = 1; // after `{`
const KEY = 2; // inside a member's key
const COLON_NEXT = 3; // after a key
const VALUE_NEXT = 4; // after `:`
const VALUE = 5; // inside a member's value (not an items array)
const AFTER_MEMBER = 6; // after a value: `,` or `}`
const KEY_NEXT = 7; // after `,`
const DONE = 8; // after the closing `}`: only whitespace may follow
const RAW = 9; // the body is not an object: held whole, parsed at the end
const ITEMS = 10; // inside the items array: see the item states

// Where the exact item scan is, inside the items array.
const ITEM_OR_CLOSE = 0; // after `[`
const IN_ITEM = 1;
const AFTER_ITEM = 2; // `,` or `]`
const ITEM_NEXT = 3; // after `,`

/**
 * Decodes a Kubernetes list body (`{"kind":…,"metadata":{…},"items":[…]}`) as its text arrives,
 * handing over its items in parsed batches, so that a list of any size is never held as one
 * string (V8's limit is 2^29 − 24 characters) and no event-loop turn parses more than one batch.
 *
 * How it finds the items. The members around the items array are delimited exactly (depth,
 * strings, escapes: {@link JsonValueEnd}) and each parsed with `JSON.parse`. Inside the array,
 * the first two items are delimited exactly too; from them the decoder learns how an item
 * boundary looks (`},{"metadata":` for the API server's typed lists, `},{"apiVersion":` for
 * custom resources) and from then on finds candidate boundaries with the native `indexOf`. A
 * batch is the text from a known item start to a candidate, parsed as `[` + text + `]`: a
 * candidate inside an item or a string leaves brackets or a string open, so the parse succeeds
 * exactly when the candidate is a real boundary. The first failed parse (an object whose own
 * fields repeat the pattern) switches the rest of the body to the exact scan, which looks at far
 * more characters in JavaScript than the native search does (docs/performance-notes.md, "Lists in
 * one response").
 *
 * It accepts what `JSON.parse` accepts, with the same values (property-tested, chunk splits at
 * every position), except a body with two `items` keys, which fails with `not-a-list`
 * (`JSON.parse` keeps the last; the decoder has handed over the first). Failures are
 * ProtocolErrors: `non-json-body` for text that is not JSON or ends early, `body-too-large` for
 * a member or item longer than `maxChars`, `not-a-list` as above.
 *
 * ## Example
 * ```ts
 * const decoder = new ListDecoder({ path: '/api/v1/pods', batchChars: 1 << 20, maxChars: 1 << 29, onItems: (items) => cache.add(items) });
 * response.setEncoding('utf8');
 * response.on('data', (text: string) => decoder.push(text));
 * response.on('end', () => {
 *   const list = decoder.end() as { metadata: { resourceVersion: string }; items: unknown[] }; // items: the last batch
 * });
 * ```
 */
export class ListDecoder {
  private state = START;
  /** The text of the key or value being read, in pieces. */
  private token: string[] = [];
  private tokenChars = 0;
  private key = '';
  /** Members other than a streamed items array, as raw `"key":value` text, in order. */
  private readonly members: string[] = [];
  private itemsStreamed = false;
  private lastItems: unknown[] = [];
  private readonly valueEnd = new JsonValueEnd();

  // The items array. Offsets count characters from just after its `[`.
  private readonly held = new HeldText();
  private itemState = ITEM_OR_CLOSE;
  private scanAt = 0;
  private batchStart = 0;
  private firstItemStart = 0;
  private itemStart = 0;
  private lastItemEnd = 0;
  private itemsEnded = 0;
  private exactOnly = false;
  /** `}` + separator + the first item's opening up to its first key: a likely boundary. */
  private pattern: string | undefined;
  private separatorLength = 0;
  private searchFrom = 0;

  constructor(private readonly options: ListDecoderOptions) {}

  /** Feeds the next piece of the body's text. Throws a ProtocolError when it cannot be a list. */
  push(text: string): void {
    if (this.state === ITEMS) this.pushItems(text);
    else this.scanTop(text, 0);
  }

  /**
   * The body has ended: returns it as `JSON.parse` would, except that a streamed `items` array
   * holds only the last batch (the others went to `onItems`). Throws a ProtocolError when the
   * text ended before its JSON did.
   */
  end(): unknown {
    if (this.state === ITEMS && this.pattern !== undefined) this.rescanExactly();
    if (this.state === RAW) return this.parse(this.token.join(''), 'the body');
    if (this.state !== DONE) throw this.notJson('ends before its JSON does', this.token.join('').slice(-200));
    const list = this.parse(`{${this.members.join(',')}}`, 'the list') as Record<string, unknown>;
    if (this.itemsStreamed) list['items'] = this.lastItems;
    return list;
  }

  private scanTop(text: string, from: number): void {
    const length = text.length;
    let i = from;
    while (i < length) {
      const state = this.state;
      if (state === RAW) {
        this.collect(text, i, length);
        return;
      }
      if (state === KEY || state === VALUE) {
        const end = this.valueEnd.scan(text, i);
        if (end === -1) {
          this.collect(text, i, length);
          return;
        }
        this.collect(text, i, end);
        i = end;
        if (state === KEY) this.endKey();
        else this.endMember(this.takeToken());
        continue;
      }
      const code = text.charCodeAt(i);
      if (isJsonWhitespace(code)) {
        i++;
        continue;
      }
      switch (state) {
        case START:
          if (code === OPEN_BRACE) this.state = KEY_OR_END;
          else {
            // Not an object: parsed whole at the end, to tell a JSON array (not a list) from garbage.
            this.state = RAW;
            continue;
          }
          break;
        case KEY_OR_END:
        case KEY_NEXT:
          if (code === CLOSE_BRACE && state === KEY_OR_END) this.state = DONE;
          else if (code === QUOTE) this.startToken(KEY);
          else throw this.unexpected(text, i);
          if (this.state === KEY) continue;
          break;
        case COLON_NEXT:
          if (code !== COLON) throw this.unexpected(text, i);
          this.state = VALUE_NEXT;
          break;
        case VALUE_NEXT:
          if (this.key === 'items' && code === OPEN_BRACKET) {
            this.startItems();
            this.pushItems(text.slice(i + 1));
            return;
          }
          this.startToken(VALUE);
          continue;
        case AFTER_MEMBER:
          if (code === COMMA) this.state = KEY_NEXT;
          else if (code === CLOSE_BRACE) this.state = DONE;
          else throw this.unexpected(text, i);
          break;
        case DONE:
          throw this.unexpected(text, i);
      }
      i++;
    }
  }

  private startToken(state: typeof KEY | typeof VALUE): void {
    this.state = state;
    this.valueEnd.start();
  }

  private collect(text: string, from: number, to: number): void {
    if (to <= from) return;
    this.tokenChars += to - from;
    if (this.tokenChars > this.options.maxChars) {
      throw new ProtocolError('body-too-large', `a member of the list of ${this.options.path} exceeds ${this.options.maxChars} characters`);
    }
    this.token.push(from === 0 && to === text.length ? text : text.slice(from, to));
  }

  private takeToken(): string {
    const text = this.token.length === 1 ? this.token[0]! : this.token.join('');
    this.token = [];
    this.tokenChars = 0;
    return text;
  }

  private endKey(): void {
    const raw = this.takeToken();
    const key = this.parse(raw, 'a key of the list') as string;
    if (key === 'items' && this.itemsStreamed) {
      throw new ProtocolError('not-a-list', `the list of ${this.options.path} has two items members`);
    }
    this.key = key;
    this.token.push(raw, ':');
    this.tokenChars = raw.length + 1;
    this.state = COLON_NEXT;
  }

  private endMember(member: string): void {
    this.members.push(member);
    this.state = AFTER_MEMBER;
  }

  private startItems(): void {
    // The key stays among the members as a placeholder, so that `end` keeps JSON.parse's order
    // and its last-key-wins rule for any earlier `items` member.
    this.endMember(`${this.takeToken()}null`);
    this.itemsStreamed = true;
    this.state = ITEMS;
    this.options.onItemsStart?.(this.parse(`{${this.members.slice(0, -1).join(',')}}`, 'the head of the list') as Record<string, unknown>);
  }

  private pushItems(text: string): void {
    this.held.push(text);
    if (this.pattern !== undefined) this.searchBoundaries();
    else this.scanItems();
    if (this.state === ITEMS) this.held.dropBefore(this.batchStart);
  }

  /** The exact scan: every item delimited by {@link JsonValueEnd}; a batch is cut when the next item starts. */
  private scanItems(): void {
    const held = this.held;
    for (let piece = held.pieceAt(this.scanAt); piece < held.count; piece++) {
      const text = held.piece(piece);
      const base = held.start(piece);
      const length = text.length;
      let i = this.scanAt - base;
      while (i < length) {
        if (this.itemState === IN_ITEM) {
          const end = this.valueEnd.scan(text, i);
          if (end === -1) {
            i = length;
            break;
          }
          // Only a scalar can end where it started: at a character no value starts with.
          if (base + end === this.itemStart) throw this.unexpected(text, i);
          i = end;
          this.lastItemEnd = base + end;
          this.itemsEnded++;
          this.itemState = AFTER_ITEM;
          continue;
        }
        const code = text.charCodeAt(i);
        if (isJsonWhitespace(code)) {
          i++;
          continue;
        }
        if (code === CLOSE_BRACKET && (this.itemState === AFTER_ITEM || this.itemState === ITEM_OR_CLOSE)) {
          this.endItems(base + i);
          return;
        }
        if (this.itemState === AFTER_ITEM) {
          if (code !== COMMA) throw this.unexpected(text, i);
          this.itemState = ITEM_NEXT;
          i++;
          continue;
        }
        this.startItem(base + i);
        if (this.pattern !== undefined) {
          this.searchBoundaries();
          return;
        }
      }
      this.scanAt = base + length;
      if (this.scanAt - this.batchStart > this.options.maxChars) {
        throw new ProtocolError('body-too-large', `an item of the list of ${this.options.path} exceeds ${this.options.maxChars} characters`);
      }
    }
  }

  /** An item starts at `at` (its first character, not yet scanned). */
  private startItem(at: number): void {
    if (this.itemsEnded === 0) this.batchStart = this.firstItemStart = at;
    else if (this.lastItemEnd - this.batchStart >= this.options.batchChars) {
      this.options.onItems(this.parseItems(this.batchStart, this.lastItemEnd));
      this.batchStart = at;
    }
    this.scanAt = this.itemStart = at;
    this.itemState = IN_ITEM;
    this.valueEnd.start();
    if (this.itemsEnded === 1 && !this.exactOnly) this.learnBoundary(at);
  }

  /** From the first two items: what the text between two items looks like, to search for it. */
  private learnBoundary(secondItemStart: number): void {
    // Held text is dropped only after a push: the first item, even if already handed over, is still here.
    const firstItemEnd = this.lastItemEnd;
    const separator = this.held.text(firstItemEnd, secondItemStart);
    const opening = /^\{[ \t\n\r]*"[^"\\]*"[ \t\n\r]*:/.exec(this.held.text(this.firstItemStart, Math.min(firstItemEnd, this.firstItemStart + 256)));
    if (opening === null) {
      this.exactOnly = true;
      return;
    }
    this.pattern = `}${separator}${opening[0]}`;
    this.separatorLength = separator.length;
    this.searchFrom = this.batchStart + this.options.batchChars - 1;
  }

  /** The fast path: cut at the first candidate boundary past a batch's size; a failed parse means exact from here on. */
  private searchBoundaries(): void {
    const pattern = this.pattern!;
    for (;;) {
      const candidate = this.held.indexOf(pattern, this.searchFrom);
      if (candidate === -1) {
        // The next search starts where the pattern could still begin.
        this.searchFrom = Math.max(this.searchFrom, this.held.end - pattern.length + 1);
        // No boundary where one should long have been (the items ended, or the text changed its
        // form): the exact scan takes the rest.
        if (this.held.end - this.batchStart > 4 * this.options.batchChars + pattern.length) this.rescanExactly();
        return;
      }
      let items: unknown[];
      try {
        items = JSON.parse(`[${this.held.text(this.batchStart, candidate + 1)}]`) as unknown[];
      } catch {
        this.rescanExactly();
        return;
      }
      this.options.onItems(items);
      this.batchStart = candidate + 1 + this.separatorLength;
      this.searchFrom = this.batchStart + this.options.batchChars - 1;
    }
  }

  /** Back to the exact scan from the start of the current batch (an item start), for good. */
  private rescanExactly(): void {
    this.pattern = undefined;
    this.exactOnly = true;
    this.scanAt = this.batchStart;
    this.lastItemEnd = this.batchStart;
    this.itemState = ITEM_NEXT;
    this.scanItems();
  }

  /** The items array closed at `closeAt`: the last batch is kept for `end`, the rest is the top level's. */
  private endItems(closeAt: number): void {
    this.lastItems = this.itemsEnded === 0 ? [] : this.parseItems(this.batchStart, this.lastItemEnd);
    const rest = this.held.takeAfter(closeAt + 1);
    this.state = AFTER_MEMBER;
    for (const text of rest) this.scanTop(text, 0);
  }

  private parseItems(from: number, to: number): unknown[] {
    const text = this.held.text(from, to);
    try {
      return JSON.parse(`[${text}]`) as unknown[];
    } catch {
      throw this.notJson('is not JSON', text.slice(0, 1000));
    }
  }

  private parse(text: string, what: string): unknown {
    try {
      return JSON.parse(text);
    } catch {
      throw this.notJson(`is not JSON (${what})`, text.slice(0, 1000));
    }
  }

  private unexpected(text: string, at: number): ProtocolError {
    return this.notJson(`is not JSON: unexpected ${JSON.stringify(text.charAt(at))}`, text.slice(Math.max(0, at - 100), at + 100));
  }

  private notJson(problem: string, excerpt: string): ProtocolError {
    return new ProtocolError('non-json-body', `the list of ${this.options.path} ${problem}`, excerptOf(excerpt));
  }
}
