import type { CrdSchema } from './customResourceDefinition';
import { docComment, literalType, pascalCase, propertyKey } from './typeScriptText';

/** Where a schema sits: the name its declared type would take, and its path for the docs. */
export interface Place {
  /** The type name to declare (`CertificateV1SpecPrivateKey`), before it is made unique. */
  readonly name: string;
  /** The field's path in the object (`spec.privateKey`, `spec.endpoints[]`). */
  readonly path: string;
  /** The object type it belongs to, for the docs (`` `cert-manager.io/v1` Certificate ``). */
  readonly owner: string;
}

/**
 * Structural schemas as TypeScript types: each object with properties becomes a named, exported
 * interface (named after its path: `CertificateV1Spec`, `CertificateV1SpecPrivateKey`), declared
 * after the type that uses it; everything else is a type expression in place.
 *
 * The rules, for the objects the API server serves (plain JSON):
 * 1. `string`, `integer`/`number`, `boolean` map to `string`, `number`, `boolean`; an `enum` of
 *    such values to the union of their literals. Formats keep their base type and are noted in the
 *    JSDoc: `date-time` is an RFC 3339 string on the wire, not a `Date`.
 * 2. `x-kubernetes-int-or-string` (or `format: int-or-string`) is `number | string`.
 * 3. An array is a `readonly` array of its items. `x-kubernetes-list-type: map` with
 *    `x-kubernetes-list-map-keys` makes those keys required in the item type (the API server
 *    requires or defaults them) and is documented on the property and the item type; `set` is
 *    documented.
 * 4. An object with `properties` is an interface of `readonly` fields, required as `required`
 *    says. `x-kubernetes-preserve-unknown-fields` adds `readonly [key: string]: unknown` beside
 *    them; with no properties it is that open object, and with no `type` at all, `unknown` (any
 *    JSON). `x-kubernetes-embedded-resource` adds `apiVersion` and `kind` (required) and
 *    `metadata` (`Partial<ObjectMeta>`). An object of `additionalProperties` is a map to their
 *    type; an object with neither is empty.
 * 5. `nullable` adds `| null`. `description` becomes the field's JSDoc, with the default value
 *    and the notes above.
 *
 * Nothing maps to `any`: what the schema leaves open is `unknown`.
 */
export class SchemaTypes {
  /** The declarations written so far, in order; a slot is reserved before an object's fields are. */
  private readonly declarations: string[] = [];
  /** Set when a type refers to `ObjectMeta` (an embedded resource), so the module imports it. */
  usesObjectMeta = false;

  /** @param names hands out unique type names for the whole module. */
  constructor(private readonly names: UniqueNames) {}

  /** Every declaration written, in order, each ending with a newline. */
  text(): string {
    return this.declarations.join('\n');
  }

  /** Declares the interface of an object schema at `place` and returns the name it got. */
  declareObject(schema: CrdSchema, place: Place, doc: readonly string[], members: DeclarationMembers = {}): string {
    const declared = this.names.take(place.name);
    const slot = this.declarations.push('') - 1;
    const lines = [...(members.prefix ?? [])];
    const required = new Set([...(schema.required ?? []), ...(members.requiredKeys ?? [])]);
    if (schema['x-kubernetes-embedded-resource'] === true) {
      this.usesObjectMeta = true;
      for (const [key, type] of [['apiVersion', 'string'], ['kind', 'string']] as const) if (schema.properties?.[key] === undefined) lines.push(`  readonly ${key}: ${type};\n`);
      if (schema.properties?.['metadata'] === undefined) lines.push('  readonly metadata?: Partial<ObjectMeta>;\n');
    }
    for (const [key, property] of Object.entries(schema.properties ?? {})) {
      if (members.skip?.has(key)) continue;
      const embeddedKey = schema['x-kubernetes-embedded-resource'] === true && (key === 'apiVersion' || key === 'kind' || key === 'metadata');
      const child: Place = { name: `${declared}${pascalCase(key)}`, path: place.path === '' ? key : `${place.path}.${key}`, owner: place.owner };
      const type = embeddedKey && key === 'metadata' ? this.embeddedMetadata() : this.typeOf(property, child);
      const optional = required.has(key) || (embeddedKey && key !== 'metadata') ? '' : '?';
      lines.push(`${docComment(propertyDoc(property), '  ')}  readonly ${propertyKey(key)}${optional}: ${type};\n`);
    }
    if (schema['x-kubernetes-preserve-unknown-fields'] === true) lines.push('  readonly [key: string]: unknown;\n');
    const heading = `export interface ${declared}${members.extendsClause ? ` extends ${members.extendsClause}` : ''} {`;
    this.declarations[slot] = `${docComment(doc, '', members.tags)}${heading}\n${lines.join('')}}\n`;
    return declared;
  }

  /** Adds a declaration written elsewhere (a resource descriptor) after those so far. */
  add(declaration: string): void {
    this.declarations.push(declaration);
  }

  /** The type of a schema, declaring the interfaces it needs under names starting with `name`. */
  typeOf(schema: CrdSchema, place: Place, listMapKeys?: readonly string[]): string {
    const type = this.baseType(schema, place, listMapKeys);
    const nullable = schema.nullable === true && type !== 'unknown' && !type.split(' | ').includes('null');
    return nullable ? `${type} | null` : type;
  }

  private baseType(schema: CrdSchema, place: Place, listMapKeys: readonly string[] | undefined): string {
    if (schema['x-kubernetes-int-or-string'] === true || schema.format === 'int-or-string') return 'number | string';
    const literals = schema.enum?.map(literalType);
    if (literals !== undefined && literals.length > 0 && literals.every((literal): literal is string => literal !== undefined)) return [...new Set(literals)].join(' | ');
    switch (schema.type) {
      case 'string':
        return 'string';
      case 'integer':
      case 'number':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'array':
        return this.arrayType(schema, place);
      case 'object':
        return this.objectType(schema, place, listMapKeys);
      default:
        // No type: only an embedded resource or an open value is structural without one.
        if (schema['x-kubernetes-embedded-resource'] === true || schema.properties !== undefined) return this.objectType(schema, place, listMapKeys);
        return 'unknown';
    }
  }

  private arrayType(schema: CrdSchema, place: Place): string {
    if (schema.items === undefined) return 'readonly unknown[]';
    const keys = schema['x-kubernetes-list-type'] === 'map' ? schema['x-kubernetes-list-map-keys'] : undefined;
    // Items are named after their list; an array of arrays names its inner items `...Item`.
    const item = this.typeOf(schema.items, { ...place, name: schema.items.type === 'array' ? `${place.name}Item` : place.name, path: `${place.path}[]` }, keys);
    // `readonly` binds looser than `[]`: a union or a readonly item needs parentheses.
    return item.includes('|') || item.startsWith('readonly ') ? `readonly (${item})[]` : `readonly ${item}[]`;
  }

  private objectType(schema: CrdSchema, place: Place, listMapKeys: readonly string[] | undefined): string {
    const open = schema['x-kubernetes-preserve-unknown-fields'] === true;
    const hasProperties = Object.keys(schema.properties ?? {}).length > 0;
    if (hasProperties || schema['x-kubernetes-embedded-resource'] === true) {
      return this.declareObject(schema, place, objectDoc(place, schema, listMapKeys), { requiredKeys: listMapKeys });
    }
    const values = schema.additionalProperties;
    if (typeof values === 'object') return `{ readonly [key: string]: ${this.typeOf(values, { ...place, name: `${place.name}Value`, path: `${place.path}.*` })} }`;
    if (values === true || open) return '{ readonly [key: string]: unknown }';
    return 'Readonly<Record<string, never>>';
  }

  private embeddedMetadata(): string {
    this.usesObjectMeta = true;
    return 'Partial<ObjectMeta>';
  }
}

/** What {@link SchemaTypes.declareObject} adds to, or leaves out of, the schema's members. */
export interface DeclarationMembers {
  /** Member lines written first (the root's `apiVersion` and `kind`). */
  readonly prefix?: readonly string[];
  /** Properties left out (the root's `metadata`, which `KubeObject` declares). */
  readonly skip?: ReadonlySet<string>;
  /** What the interface extends (`KubeObject` for the root). */
  readonly extendsClause?: string;
  /** Properties required whatever the schema's `required` says (a list-map's keys). */
  readonly requiredKeys?: readonly string[];
  /** JSDoc tags after the text (`@deprecated ...`). */
  readonly tags?: readonly string[];
}

/** Hands out type names, each once: a name taken before gets the next free number (`Name2`). */
export class UniqueNames {
  private readonly taken: Set<string>;

  /** @param reserved names the module uses otherwise (its imports). */
  constructor(reserved: Iterable<string>) {
    this.taken = new Set(reserved);
  }

  take(name: string): string {
    let candidate = name;
    for (let n = 2; this.taken.has(candidate); n++) candidate = `${name}${n}`;
    this.taken.add(candidate);
    return candidate;
  }
}

/** The JSDoc of a field: its description, then the notes its schema calls for. */
function propertyDoc(schema: CrdSchema): string[] {
  const notes: string[] = [];
  if (schema['x-kubernetes-int-or-string'] === true) notes.push('An integer or a string (`x-kubernetes-int-or-string`).');
  else if (schema.format === 'date-time') notes.push('Format `date-time`: an RFC 3339 timestamp, a string on the wire.');
  else if (schema.format !== undefined) notes.push(`Format \`${schema.format}\`.`);
  const listType = schema['x-kubernetes-list-type'];
  const keys = schema['x-kubernetes-list-map-keys'];
  if (listType === 'map' && keys !== undefined) notes.push(`A list-map keyed by ${keyList(keys)} (\`x-kubernetes-list-type: map\`): at most one item per key.`);
  else if (listType === 'set') notes.push('A set (`x-kubernetes-list-type: set`): no item twice.');
  const open = schema['x-kubernetes-preserve-unknown-fields'] === true && schema['x-kubernetes-embedded-resource'] !== true && Object.keys(schema.properties ?? {}).length === 0;
  if (open) notes.push(schema.type === undefined ? 'Any JSON value (`x-kubernetes-preserve-unknown-fields`).' : 'Any fields (`x-kubernetes-preserve-unknown-fields`).');
  if (schema.default !== undefined) notes.push(`Default: \`${JSON.stringify(schema.default)}\`.`);
  return [schema.description ?? '', notes.join(' ')];
}

/** The JSDoc of a declared object type: where it sits, and what it is beyond its field's description (which the field carries). */
function objectDoc(place: Place, schema: CrdSchema, listMapKeys: readonly string[] | undefined): string[] {
  // A field carries its own description; an item of a list or a value of a map has no field.
  const described = place.path.endsWith('[]') || place.path.endsWith('.*') ? (schema.description ?? '') : '';
  const notes: string[] = [`\`${place.path}\` of ${place.owner}.`];
  if (listMapKeys !== undefined && listMapKeys.length > 0) {
    const keys = listMapKeys.length === 1 ? 'that key is always present, and unique across the list' : 'those keys are always present, and unique together across the list';
    notes.push(`An item of a list-map keyed by ${keyList(listMapKeys)} (\`x-kubernetes-list-map-keys\`): ${keys}.`);
  }
  if (schema['x-kubernetes-embedded-resource'] === true) notes.push('An embedded Kubernetes object (`x-kubernetes-embedded-resource`): `apiVersion` and `kind` are always present.');
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) notes.push('Fields beyond those listed are kept (`x-kubernetes-preserve-unknown-fields`).');
  return [described, notes.join(' ')];
}

function keyList(keys: readonly string[]): string {
  const quoted = keys.map((key) => `\`${key}\``);
  return quoted.length <= 1 ? (quoted[0] ?? '') : `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)}`;
}
