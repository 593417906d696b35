/**
 * Kubernetes label and field selectors: parsing, validation and matching, with the API server's
 * grammar and semantics, so a selector that works client-side means the same thing server-side.
 */

/** A selector that does not parse, or names an invalid label key or value. */
export class SelectorSyntaxError extends Error {
  /** The whole selector text as given. */
  readonly selector: string;
  /** The 0-based character offset where the problem was found. */
  readonly position: number;

  constructor(message: string, selector: string, position: number) {
    super(`invalid selector ${JSON.stringify(selector)} at ${position}: ${message}`);
    this.name = 'SelectorSyntaxError';
    this.selector = selector;
    this.position = position;
  }
}

/** One comma-separated term of a label selector. All terms must match. */
export interface LabelRequirement {
  readonly key: string;
  /** `GreaterThan`/`LessThan` (`replicas>2`) compare the label, read as a 64-bit integer, with the value. */
  readonly operator: 'Equals' | 'NotEquals' | 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'GreaterThan' | 'LessThan';
  /**
   * One value for Equals/NotEquals, one integer for GreaterThan/LessThan, one or more for In/NotIn
   * (`in ()` is the empty value alone, as on the API server), none for Exists/DoesNotExist.
   */
  readonly values: readonly string[];
}

/** A parsed label selector. `toString()` gives its canonical text (requirements sorted by key). */
export interface LabelSelector {
  readonly requirements: readonly LabelRequirement[];
  /**
   * Whether labels satisfy every requirement. Only own properties count, so wire-supplied keys
   * such as `__proto__` or `constructor` never reach the prototype.
   */
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
  /** The canonical text: requirements sorted by key. */
  toString(): string;
}

/** One term of a field selector. */
export interface FieldRequirement {
  readonly field: string;
  readonly operator: 'Equals' | 'NotEquals';
  readonly value: string;
}

/** A parsed field selector. A missing field reads as '' (as the API server does). */
export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
  /** True when every requirement holds; `getField` reads a field path (a missing field reads as ''). */
  matches(getField: (field: string) => string | undefined): boolean;
}

const MAX_NAME_LENGTH = 63;
const MAX_PREFIX_LENGTH = 253;
const NAME_PATTERN = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE_PATTERN = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;
const DNS_SUBDOMAIN_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** What Go's `strconv.ParseInt(s, 10, 64)` reads, the API server's reading of a label for `>`/`<`. */
const INT64_PATTERN = /^[+-]?[0-9]+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A label value as a 64-bit integer, or undefined where the API server's ParseInt fails. */
function int64(text: string): bigint | undefined {
  if (!INT64_PATTERN.test(text)) return undefined;
  const value = BigInt(text);
  return value < INT64_MIN || value > INT64_MAX ? undefined : value;
}

/** Why `key` is not a Kubernetes qualified name, or undefined when it is one. */
function labelKeyProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return `label key ${JSON.stringify(key)} has more than one '/'`;
  const name = parts[parts.length - 1]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0 || prefix.length > MAX_PREFIX_LENGTH || !DNS_SUBDOMAIN_PATTERN.test(prefix)) {
      return `label key prefix ${JSON.stringify(prefix)} must be a DNS subdomain (lowercase, at most ${MAX_PREFIX_LENGTH} characters)`;
    }
  }
  if (name.length === 0 || name.length > MAX_NAME_LENGTH || !NAME_PATTERN.test(name)) {
    return `label key name ${JSON.stringify(name)} must be 1-${MAX_NAME_LENGTH} characters of [A-Za-z0-9_.-], starting and ending alphanumeric`;
  }
  return undefined;
}

/** Why `value` is not a Kubernetes label value, or undefined when it is one. */
function labelValueProblem(value: string): string | undefined {
  if (value.length > MAX_NAME_LENGTH || !VALUE_PATTERN.test(value)) {
    return `label value ${JSON.stringify(value)} must be empty or at most ${MAX_NAME_LENGTH} characters of [A-Za-z0-9_.-], starting and ending alphanumeric`;
  }
  return undefined;
}

/** The own string value of a label, ignoring inherited properties and non-string junk. */
function ownLabel(labels: Readonly<Record<string, string>> | undefined, key: string): string | undefined {
  if (labels === undefined || labels === null || !Object.hasOwn(labels, key)) return undefined;
  const value: unknown = labels[key];
  return typeof value === 'string' ? value : undefined;
}

type TokenKind = 'ident' | '=' | '==' | '!=' | '!' | '(' | ')' | ',' | '<' | '>' | 'end';
interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  readonly position: number;
}

const SYMBOL_CHARS = '!=(),<>';

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (SYMBOL_CHARS.includes(c)) {
      const two = text.slice(i, i + 2);
      if (two === '==' || two === '!=') {
        tokens.push({ kind: two, text: two, position: i });
        i += 2;
      } else {
        tokens.push({ kind: c as TokenKind, text: c, position: i });
        i++;
      }
    } else {
      const start = i;
      while (i < text.length && !/\s/.test(text[i]!) && !SYMBOL_CHARS.includes(text[i]!)) i++;
      tokens.push({ kind: 'ident', text: text.slice(start, i), position: start });
    }
  }
  tokens.push({ kind: 'end', text: '', position: text.length });
  return tokens;
}

class LabelParser {
  private index = 0;
  constructor(private readonly text: string, private readonly tokens: readonly Token[]) {}

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    if (this.peek().kind === 'end') return requirements;
    for (;;) {
      requirements.push(this.requirement());
      const next = this.next();
      if (next.kind === 'end') return requirements;
      if (next.kind !== ',') this.fail(next, `expected ',' or end of selector, found '${next.text}'`);
    }
  }

  private requirement(): LabelRequirement {
    let token = this.next();
    if (token.kind === '!') {
      const key = this.key(this.next());
      return { key, operator: 'DoesNotExist', values: [] };
    }
    const key = this.key(token);
    token = this.peek();
    if (token.kind === ',' || token.kind === 'end') return { key, operator: 'Exists', values: [] };
    this.next();
    switch (token.kind) {
      case '=':
      case '==':
        return { key, operator: 'Equals', values: [this.exactValue()] };
      case '!=':
        return { key, operator: 'NotEquals', values: [this.exactValue()] };
      case '<':
      case '>':
        return { key, operator: token.kind === '>' ? 'GreaterThan' : 'LessThan', values: [this.integerValue()] };
      case 'ident':
        if (token.text === 'in') return { key, operator: 'In', values: this.valueSet() };
        if (token.text === 'notin') return { key, operator: 'NotIn', values: this.valueSet() };
        return this.fail(token, `expected an operator (=, ==, !=, in, notin), found '${token.text}'`);
      default:
        return this.fail(token, `expected an operator (=, ==, !=, in, notin), found '${token.text}'`);
    }
  }

  private key(token: Token): string {
    if (token.kind !== 'ident') this.fail(token, `expected a label key, found '${token.text || 'end of selector'}'`);
    const problem = labelKeyProblem(token.text);
    if (problem !== undefined) this.fail(token, problem);
    return token.text;
  }

  /** The value after `=` or `!=`; an immediate ',' or end means the empty value. */
  private exactValue(): string {
    const token = this.peek();
    if (token.kind === ',' || token.kind === 'end') return '';
    this.next();
    return this.value(token);
  }

  /** The value after `>` or `<`: a label value that reads as a 64-bit integer. */
  private integerValue(): string {
    const token = this.peek();
    const value = this.exactValue();
    if (int64(value) === undefined) this.fail(token, `the value after '>' or '<' must be an integer, found '${value}'`);
    return value;
  }

  /** `( v1, v2, ... )`: empty entries, and `()` itself, are the empty value (as the API server reads them). */
  private valueSet(): string[] {
    const open = this.next();
    if (open.kind !== '(') this.fail(open, `expected '(' after in/notin, found '${open.text || 'end of selector'}'`);
    const values = new Set<string>();
    for (;;) {
      let token = this.next();
      if (token.kind === ',' || token.kind === ')') {
        values.add('');
      } else {
        values.add(this.value(token));
        token = this.next();
      }
      if (token.kind === ')') return [...values].sort();
      if (token.kind !== ',') this.fail(token, `expected ',' or ')' in value list, found '${token.text || 'end of selector'}'`);
    }
  }

  private value(token: Token): string {
    if (token.kind !== 'ident') this.fail(token, `expected a label value, found '${token.text}'`);
    const problem = labelValueProblem(token.text);
    if (problem !== undefined) this.fail(token, problem);
    return token.text;
  }

  private peek(): Token {
    return this.tokens[this.index]!;
  }

  private next(): Token {
    const token = this.tokens[this.index]!;
    if (token.kind !== 'end') this.index++;
    return token;
  }

  private fail(token: Token, message: string): never {
    throw new SelectorSyntaxError(message, this.text, token.position);
  }
}

function requirementMatches(requirement: LabelRequirement, valueSet: ReadonlySet<string> | undefined, labels: Readonly<Record<string, string>> | undefined): boolean {
  const value = ownLabel(labels, requirement.key);
  switch (requirement.operator) {
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Equals':
      return value === requirement.values[0];
    case 'NotEquals':
      return value !== requirement.values[0];
    case 'In':
      return value !== undefined && valueSet!.has(value);
    case 'NotIn':
      return value === undefined || !valueSet!.has(value);
    case 'GreaterThan':
    case 'LessThan': {
      const actual = value === undefined ? undefined : int64(value);
      if (actual === undefined) return false;
      const bound = BigInt(requirement.values[0]!);
      return requirement.operator === 'GreaterThan' ? actual > bound : actual < bound;
    }
  }
}

function requirementText(requirement: LabelRequirement): string {
  const { key, values } = requirement;
  switch (requirement.operator) {
    case 'Exists':
      return key;
    case 'DoesNotExist':
      return `!${key}`;
    case 'Equals':
      return `${key}=${values[0]}`;
    case 'NotEquals':
      return `${key}!=${values[0]}`;
    case 'In':
      return `${key} in (${values.join(',')})`;
    case 'NotIn':
      return `${key} notin (${values.join(',')})`;
    case 'GreaterThan':
      return `${key}>${values[0]}`;
    case 'LessThan':
      return `${key}<${values[0]}`;
  }
}

class ParsedLabelSelector implements LabelSelector {
  private readonly valueSets: readonly (ReadonlySet<string> | undefined)[];

  constructor(readonly requirements: readonly LabelRequirement[]) {
    this.valueSets = requirements.map((r) => (r.operator === 'In' || r.operator === 'NotIn' ? new Set(r.values) : undefined));
  }

  matches(labels: Readonly<Record<string, string>> | undefined): boolean {
    for (let i = 0; i < this.requirements.length; i++) {
      if (!requirementMatches(this.requirements[i]!, this.valueSets[i], labels)) return false;
    }
    return true;
  }

  toString(): string {
    return this.requirements.map(requirementText).join(',');
  }
}

/**
 * Parses a Kubernetes label selector (`app=web, tier in (a,b), !legacy, replicas>2`) with the API
 * server's grammar (apimachinery `labels.Parse`). The empty string selects everything. `!=` and
 * `notin` also match objects without the key; `>` and `<` match only a label that reads as an
 * integer, as on the API server.
 * Requirements come out sorted by key (stable), as the API server's parser sorts them.
 *
 * @throws SelectorSyntaxError on bad syntax or an invalid label key or value.
 */
export function parseLabelSelector(text: string): LabelSelector {
  const requirements = new LabelParser(text, tokenize(text)).parse();
  const sorted = requirements
    .map((requirement, order) => ({ requirement, order }))
    .sort((a, b) => (a.requirement.key < b.requirement.key ? -1 : a.requirement.key > b.requirement.key ? 1 : a.order - b.order))
    .map(({ requirement }) => requirement);
  return new ParsedLabelSelector(sorted);
}

/** Splits where `isSeparatorAt` finds an unescaped separator; pieces keep their escapes and offsets. */
function splitUnescaped(text: string, offset: number, isSeparatorAt: (i: number) => number): { piece: string; position: number; separator: string }[] {
  const pieces: { piece: string; position: number; separator: string }[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') {
      i++;
      continue;
    }
    const length = isSeparatorAt(i);
    if (length > 0) {
      pieces.push({ piece: text.slice(start, i), position: offset + start, separator: text.slice(i, i + length) });
      start = i + length;
      i += length - 1;
    }
  }
  pieces.push({ piece: text.slice(start), position: offset + start, separator: '' });
  return pieces;
}

/** Undoes the API server's field-value escaping (`\\`, `\,`, `\=`); a bare '=' is an error there too. */
function unescapeFieldValue(value: string, selector: string, position: number): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '=') throw new SelectorSyntaxError(`unescaped '=' in field value ${JSON.stringify(value)} (write \\=)`, selector, position + i);
    if (c !== '\\') {
      out += c;
      continue;
    }
    const escaped = value[i + 1];
    if (escaped !== '\\' && escaped !== ',' && escaped !== '=') {
      throw new SelectorSyntaxError(`invalid escape sequence in field value ${JSON.stringify(value)}`, selector, position + i);
    }
    out += escaped;
    i++;
  }
  return out;
}

class ParsedFieldSelector implements FieldSelector {
  constructor(readonly requirements: readonly FieldRequirement[]) {}

  matches(getField: (field: string) => string | undefined): boolean {
    for (const { field, operator, value } of this.requirements) {
      const actual = getField(field) ?? '';
      if ((actual === value) !== (operator === 'Equals')) return false;
    }
    return true;
  }
}

/**
 * Parses a Kubernetes field selector (`metadata.name=web,status.phase!=Failed`). Terms are
 * `field=value`, `field==value` or `field!=value`, separated by commas; `\,` `\=` `\\` escape
 * inside values, as the API server accepts. Empty terms are skipped; '' selects everything.
 *
 * @throws SelectorSyntaxError on a term without an operator or with an empty field name.
 */
export function parseFieldSelector(text: string): FieldSelector {
  const requirements: FieldRequirement[] = [];
  const terms = splitUnescaped(text, 0, (i) => (text[i] === ',' ? 1 : 0));
  for (const { piece, position } of terms) {
    if (piece.trim() === '') continue;
    const operatorAt = (i: number): number => {
      const two = piece.slice(i, i + 2);
      if (two === '!=' || two === '==') return 2;
      return piece[i] === '=' ? 1 : 0;
    };
    const [lhs, rhs] = splitUnescaped(piece, position, operatorAt);
    if (rhs === undefined) throw new SelectorSyntaxError(`term ${JSON.stringify(piece)} has no operator (=, ==, !=)`, text, position);
    const field = lhs!.piece.trim();
    if (field === '') throw new SelectorSyntaxError(`term ${JSON.stringify(piece)} has no field name`, text, position);
    const rawValue = piece.slice(rhs.position - position);
    const leading = rawValue.length - rawValue.trimStart().length;
    const value = unescapeFieldValue(rawValue.trim(), text, rhs.position + leading);
    requirements.push({ field, operator: lhs!.separator === '!=' ? 'NotEquals' : 'Equals', value });
  }
  return new ParsedFieldSelector(requirements);
}
