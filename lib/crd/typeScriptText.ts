/** Small pieces of TypeScript source text: literals, keys, names and doc comments. */

/** A single-quoted string literal. */
export function quote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')}'`;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A property key: bare when it is an identifier, quoted otherwise (`'x-foo'`, `'$ref'`). */
export function propertyKey(key: string): string {
  return IDENTIFIER.test(key) ? key : quote(key);
}

/** `dnsNames` → `DnsNames`, `x-forwarded-for` → `XForwardedFor`, `v1beta1` → `V1beta1`; `Field` for a key with no letter or digit. */
export function pascalCase(text: string): string {
  const words = text.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  const joined = words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('');
  return joined === '' ? 'Field' : joined;
}

/** `certificates` → `certificates`, `cluster-issuers` → `clusterIssuers`; a leading digit gets an underscore. */
export function camelCase(text: string): string {
  const pascal = pascalCase(text);
  const camel = pascal[0]!.toLowerCase() + pascal.slice(1);
  return /^[0-9]/.test(camel) ? `_${camel}` : camel;
}

/** A TypeScript literal type for a JSON value: a string, number, boolean or null; undefined for anything else. */
export function literalType(value: unknown): string | undefined {
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean' || value === null) return String(value);
  return undefined;
}

/**
 * A JSDoc comment of `paragraphs` (each possibly several lines) and then `tags` (`@deprecated
 * ...`), indented by `indent`; '' when there is nothing to say. Text that would end the comment
 * (`*\/`) is broken, and a paragraph line that would start a tag (`@`) is escaped, so any
 * description is safe.
 */
export function docComment(paragraphs: readonly string[], indent = '', tags: readonly string[] = []): string {
  const text = paragraphs
    .filter((paragraph) => paragraph.trim() !== '')
    .flatMap((paragraph, index) => [...(index > 0 ? [''] : []), ...paragraph.trim().split(/\r?\n/)])
    .map((line) => line.replace(/^(\s*)@/, '$1\\@'));
  const lines = [...text, ...(text.length > 0 && tags.length > 0 ? [''] : []), ...tags].map((line) => line.replace(/\*\//g, '*\\/').trimEnd());
  if (lines.length === 0) return '';
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((line) => (line === '' ? `${indent} *\n` : `${indent} * ${line}\n`)).join('')}${indent} */\n`;
}
