import { fnv1a64Hex } from './fnvHash';
import type { KubeObject } from 'rx-informer';

/**
 * KEP-5866's `shardSelector` as the API server reads it (kubernetes/apiserver
 * `pkg/sharding/parser.go`, apimachinery `pkg/sharding/{selector,hash}.go`), for the loopback
 * server: `shardRange(object.metadata.uid, '0x…', '0x…')` terms joined by `||`, each range
 * [start, end) over the FNV-1a 64 hash of the field, with 16-digit lowercase hex bounds (or
 * `'0x10000000000000000'`, 2^64, as an end). The apiserver parses the text as CEL and walks its
 * tree; this reads the same subset by hand and refuses everything else.
 */

/** One `shardRange(field, start, end)` term. */
export interface ShardRange {
  readonly field: 'object.metadata.uid' | 'object.metadata.namespace';
  readonly start: string;
  readonly end: string;
}

/** A parsed shard selector: its terms, its canonical text (what a list echoes) and its match. */
export interface ShardSelector {
  readonly ranges: readonly ShardRange[];
  /** `Selector.String()`: the terms as `shardRange(field, 'start', 'end')` joined by ` || `. */
  readonly text: string;
  matches(object: KubeObject): boolean;
}

/** A selector the apiserver refuses; it answers 500 with `invalid shard selector: <message>`. */
export class ShardSelectorError extends Error {}

type Token = { readonly kind: 'ident' | 'string' | 'number' | 'punct'; readonly text: string; readonly at: number };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) i++;
    else if (/[A-Za-z_]/.test(c)) {
      const start = i;
      while (i < text.length && /\w/.test(text[i]!)) i++;
      tokens.push({ kind: 'ident', text: text.slice(start, i), at: start });
    } else if (/\d/.test(c)) {
      const start = i;
      while (i < text.length && /[\w.]/.test(text[i]!)) i++;
      tokens.push({ kind: 'number', text: text.slice(start, i), at: start });
    } else if (c === "'" || c === '"') {
      const end = text.indexOf(c, i + 1);
      if (end === -1) throw new ShardSelectorError(`CEL parse error: Syntax error: token recognition error at: '${text.slice(i)}'`);
      tokens.push({ kind: 'string', text: text.slice(i + 1, end), at: i });
      i = end + 1;
    } else if (text.startsWith('||', i) || text.startsWith('&&', i) || text.startsWith('==', i) || text.startsWith('!=', i) || text.startsWith('<=', i) || text.startsWith('>=', i)) {
      tokens.push({ kind: 'punct', text: text.slice(i, i + 2), at: i });
      i += 2;
    } else if ('().,<>!+-*/%[]{}?:'.includes(c)) {
      tokens.push({ kind: 'punct', text: c, at: i });
      i++;
    } else throw new ShardSelectorError(`CEL parse error: Syntax error: token recognition error at: '${c}'`);
  }
  return tokens;
}

/** The apiserver's `extractHexLiteral`: `0x` and exactly 16 lowercase hex digits, or 2^64. */
function hexLiteral(token: Token | undefined, name: string): string {
  if (token === undefined || token.kind !== 'string') {
    throw new ShardSelectorError(`${name} must be a string literal (e.g. '0xff'), got expression kind ${token?.kind === 'ident' ? 'IdentKind' : 'LiteralKind'}`);
  }
  const s = token.text;
  if (!s.startsWith('0x')) throw new ShardSelectorError(`${name} must have '0x' prefix, got ${JSON.stringify(s)}`);
  const hex = s.slice(2);
  if (hex === '') throw new ShardSelectorError(`${name}: hex value is required after '0x'`);
  if (hex.length > 17) throw new ShardSelectorError(`${name}: hex value too long (${hex.length} chars, max 17): ${JSON.stringify(hex)}`);
  const bad = [...hex].find((c) => !/[0-9a-f]/.test(c));
  if (bad !== undefined) throw new ShardSelectorError(`${name}: invalid hex character ${JSON.stringify(bad)} in ${JSON.stringify(s)}`);
  if (hex.length === 17 && s !== '0x10000000000000000') throw new ShardSelectorError(`${name}: 17-digit hex value must be '0x10000000000000000' (2^64), got ${JSON.stringify(s)}`);
  if (hex.length !== 16 && hex.length !== 17) {
    throw new ShardSelectorError(`${name} must be a 0x-prefixed 16-digit hex value, got ${JSON.stringify(s)} (did you mean ${JSON.stringify(`0x${hex.padStart(16, '0')}`)}?)`);
  }
  return s;
}

/** apimachinery `HexLess`: by length, then by text. */
function hexLess(a: string, b: string): boolean {
  return a.length !== b.length ? a.length < b.length : a < b;
}

class Parser {
  private next = 0;
  constructor(private readonly tokens: readonly Token[]) {}

  /** term ('||' term)*, where a term is a shardRange call or a parenthesised selector. */
  selector(): ShardRange[] {
    const ranges = this.term();
    while (this.peek()?.text === '||') {
      this.next++;
      ranges.push(...this.term());
    }
    return ranges;
  }

  done(): void {
    const token = this.peek();
    if (token === undefined) return;
    if (token.text === '&&') throw new ShardSelectorError('unsupported function "_&&_"; only shardRange() and || are allowed');
    if (['==', '!=', '<', '>', '<=', '>='].includes(token.text)) throw new ShardSelectorError(`unsupported function "_${token.text}_"; only shardRange() and || are allowed`);
    throw new ShardSelectorError(`CEL parse error: Syntax error: extraneous input '${token.text}'`);
  }

  private term(): ShardRange[] {
    const token = this.peek();
    if (token?.text === '(') {
      this.next++;
      const inner = this.selector();
      this.expect(')');
      return inner;
    }
    if (token?.kind !== 'ident') throw new ShardSelectorError('unexpected expression kind; expected shardRange() call or || operator');
    const path = this.path();
    if (this.peek()?.text !== '(') {
      if (['==', '!=', '<', '>', '<=', '>='].includes(this.peek()?.text ?? '')) throw new ShardSelectorError(`unsupported function "_${this.peek()!.text}_"; only shardRange() and || are allowed`);
      throw new ShardSelectorError('unexpected expression kind SelectKind; expected shardRange() call or || operator');
    }
    if (path !== 'shardRange') throw new ShardSelectorError(`unsupported function ${JSON.stringify(path)}; only shardRange() and || are allowed`);
    this.next++;
    const args: Token[][] = [[]];
    let depth = 0;
    while (true) {
      const arg = this.tokens[this.next++];
      if (arg === undefined) throw new ShardSelectorError("CEL parse error: Syntax error: missing ')' at '<EOF>'");
      if (arg.text === '(') depth++;
      if (arg.text === ')' && depth-- === 0) break;
      if (arg.text === ',' && depth === 0) args.push([]);
      else args[args.length - 1]!.push(arg);
    }
    if (args.length !== 3) throw new ShardSelectorError(`shardRange() requires exactly 3 arguments, got ${args.length}`);
    const [fieldTokens, startTokens, endTokens] = args as [Token[], Token[], Token[]];
    const field = fieldTokens.map((t) => t.text).join('');
    if (!/^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/.test(field)) throw new ShardSelectorError('shardRange() first argument: expected field path (e.g. object.metadata.uid)');
    if (field !== 'object.metadata.uid' && field !== 'object.metadata.namespace') {
      throw new ShardSelectorError(`unsupported field path ${JSON.stringify(field)}; supported: object.metadata.uid, object.metadata.namespace`);
    }
    const start = hexLiteral(startTokens.length === 1 ? startTokens[0] : { kind: 'ident', text: '', at: 0 }, 'hexStart');
    const end = hexLiteral(endTokens.length === 1 ? endTokens[0] : { kind: 'ident', text: '', at: 0 }, 'hexEnd');
    if (!hexLess(start, end)) throw new ShardSelectorError(`shard range start ${start} must be less than end ${end}`);
    return [{ field, start, end }];
  }

  private path(): string {
    let path = this.tokens[this.next++]!.text;
    while (this.peek()?.text === '.' && this.tokens[this.next + 1]?.kind === 'ident') {
      path += `.${this.tokens[this.next + 1]!.text}`;
      this.next += 2;
    }
    return path;
  }

  private expect(text: string): void {
    if (this.tokens[this.next]?.text !== text) throw new ShardSelectorError(`CEL parse error: Syntax error: missing '${text}'`);
    this.next++;
  }

  private peek(): Token | undefined {
    return this.tokens[this.next];
  }
}

/**
 * Parses a `shardSelector` as the apiserver does.
 *
 * ## Example
 * ```ts
 * const selector = parseShardSelector("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')");
 * selector.matches({ metadata: { name: 'web', uid: 'test-uid-123' } });
 * ```
 *
 * @throws ShardSelectorError with the apiserver's message, for anything it refuses.
 */
export function parseShardSelector(text: string): ShardSelector {
  const trimmed = text.trim();
  if (trimmed === '') throw new ShardSelectorError('empty shard selector is not allowed; omit the parameter for unfiltered lists');
  const parser = new Parser(tokenize(trimmed));
  const ranges = parser.selector();
  parser.done();
  const field = ranges[0]!.field;
  const other = ranges.find((range) => range.field !== field);
  if (other !== undefined) throw new ShardSelectorError(`all shard ranges must use the same field, got ${JSON.stringify(field)} and ${JSON.stringify(other.field)}`);
  const read = field === 'object.metadata.uid' ? (object: KubeObject) => object.metadata.uid ?? '' : (object: KubeObject) => object.metadata.namespace ?? '';
  return {
    ranges,
    text: ranges.map((range) => `shardRange(${range.field}, '${range.start}', '${range.end}')`).join(' || '),
    matches: (object) => {
      const hash = `0x${fnv1a64Hex(read(object))}`;
      return ranges.some((range) => !hexLess(hash, range.start) && hexLess(hash, range.end));
    },
  };
}

/**
 * A request's `shardSelector` parameter parsed, its refusal worded as the apiserver answers it
 * (500 `invalid shard selector: ...`).
 *
 * @throws ShardSelectorError with that message, for a selector the apiserver refuses.
 */
export function parseRequestShardSelector(text: string): ShardSelector {
  try {
    return parseShardSelector(text);
  } catch (error) {
    if (error instanceof ShardSelectorError) throw new ShardSelectorError(`invalid shard selector: ${error.message}`);
    throw error;
  }
}

/**
 * A list or watch query narrowed by its `shardSelector` parameter, as a server with the
 * `ShardedListAndWatch` gate does (apiserver `registry/generic/registry/store.go`: parsed only
 * when the gate is on and the parameter is not empty, a parse error answers 500 `invalid shard
 * selector: ...`); without the gate the parameter is ignored and nothing is echoed.
 *
 * @throws ShardSelectorError wrapped as the apiserver wraps it, for a selector it refuses.
 */
export function withShardSelector<Q extends { readonly matches: (object: KubeObject) => boolean; readonly selective: boolean; readonly selectorKey: string }>(
  query: Q,
  text: string | undefined,
  enabled: boolean,
): Q & { readonly shardSelector?: string } {
  if (!enabled || text === undefined || text === '') return query;
  const selector = parseRequestShardSelector(text);
  const { matches } = query;
  return { ...query, selective: true, selectorKey: `${query.selectorKey}\u0000${selector.text}`, shardSelector: selector.text, matches: (object) => matches(object) && selector.matches(object) };
}
