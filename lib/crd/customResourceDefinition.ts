/**
 * What the generator reads of a CustomResourceDefinition (`apiextensions.k8s.io/v1`), checked: the
 * names, the scope and each version with its OpenAPI v3 schema, including the `x-kubernetes-*`
 * extensions that change types (kubernetes-types' `JSONSchemaProps` has none of them).
 */

/** A structural schema (a JSON Schema subset), as far as it decides a TypeScript type. */
export interface CrdSchema {
  readonly type?: string;
  readonly format?: string;
  readonly description?: string;
  readonly properties?: Readonly<Record<string, CrdSchema>>;
  readonly required?: readonly string[];
  readonly items?: CrdSchema;
  /** A schema for the values of a map, or `true` for any values. */
  readonly additionalProperties?: CrdSchema | boolean;
  readonly enum?: readonly unknown[];
  readonly nullable?: boolean;
  readonly default?: unknown;
  readonly 'x-kubernetes-int-or-string'?: boolean;
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-embedded-resource'?: boolean;
  readonly 'x-kubernetes-list-type'?: string;
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
}

/** One version of a custom resource. */
export interface CrdVersion {
  readonly name: string;
  readonly served: boolean;
  readonly deprecated: boolean;
  readonly deprecationWarning: string | undefined;
  /** `schema.openAPIV3Schema`; undefined when the version has none (then anything goes). */
  readonly schema: CrdSchema | undefined;
}

/** A CustomResourceDefinition as the generator needs it. */
export interface CrdDefinition {
  /** `metadata.name`: `<plural>.<group>`. */
  readonly name: string;
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  readonly shortNames: readonly string[];
  readonly namespaced: boolean;
  readonly versions: readonly CrdVersion[];
}

/**
 * A value that is not a CustomResourceDefinition the generator can read; the message names the
 * CRD and the path of the offending field (`certificates.cert-manager.io: spec.versions[0].name:
 * expected a string, got 3`).
 */
export class CrdError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CrdError';
  }
}

type Json = Readonly<Record<string, unknown>>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}

/** Reads the fields of one object, naming the path of any that has the wrong type. */
class Reader {
  constructor(
    private readonly crd: string,
    private readonly path: string,
    private readonly value: Json,
  ) {}

  fail(field: string, expected: string, got: unknown): never {
    throw new CrdError(`${this.crd}: ${this.at(field)}: expected ${expected}, got ${describe(got)}`);
  }

  at(field: string): string {
    if (field === '') return this.path;
    return this.path === '' ? field : `${this.path}.${field}`;
  }

  string(field: string): string {
    const value = this.value[field];
    if (typeof value !== 'string' || value === '') this.fail(field, 'a non-empty string', value);
    return value;
  }

  optionalString(field: string): string | undefined {
    const value = this.value[field];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') this.fail(field, 'a string', value);
    return value;
  }

  optionalBoolean(field: string): boolean | undefined {
    const value = this.value[field];
    if (value === undefined) return undefined;
    if (typeof value !== 'boolean') this.fail(field, 'true or false', value);
    return value;
  }

  strings(field: string): readonly string[] | undefined {
    const value = this.value[field];
    if (value === undefined) return undefined;
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) this.fail(field, 'a list of strings', value);
    return value as readonly string[];
  }

  object(field: string): Reader {
    const value = this.value[field];
    if (!isObject(value)) this.fail(field, 'an object', value);
    return new Reader(this.crd, this.at(field), value);
  }

  optionalObject(field: string): Reader | undefined {
    return this.value[field] === undefined ? undefined : this.object(field);
  }

  list(field: string): Reader[] {
    const value = this.value[field];
    if (!Array.isArray(value)) this.fail(field, 'a list', value);
    return value.map((item: unknown, index) => {
      if (!isObject(item)) this.fail(`${field}[${index}]`, 'an object', item);
      return new Reader(this.crd, `${this.at(field)}[${index}]`, item);
    });
  }

  raw(field: string): unknown {
    return this.value[field];
  }

  fields(): Json {
    return this.value;
  }
}

/**
 * Reads a parsed CustomResourceDefinition (YAML or JSON), checking every field the generator uses.
 *
 * @throws CrdError for anything that is not an `apiextensions.k8s.io/v1` CustomResourceDefinition
 * the generator can read, naming the field.
 */
export function readCustomResourceDefinition(value: unknown): CrdDefinition {
  if (!isObject(value)) throw new CrdError(`expected a CustomResourceDefinition object, got ${describe(value)}`);
  const metadataName = isObject(value['metadata']) && typeof value['metadata']['name'] === 'string' ? value['metadata']['name'] : '(unnamed)';
  const root = new Reader(metadataName, '', value);
  if (value['kind'] !== 'CustomResourceDefinition') root.fail('kind', '"CustomResourceDefinition"', value['kind']);
  if (value['apiVersion'] !== 'apiextensions.k8s.io/v1') root.fail('apiVersion', '"apiextensions.k8s.io/v1" (v1beta1 CRDs are served no more since Kubernetes 1.22)', value['apiVersion']);
  const name = root.object('metadata').string('name');
  const spec = root.object('spec');
  const names = spec.object('names');
  const scope = spec.string('scope');
  if (scope !== 'Namespaced' && scope !== 'Cluster') spec.fail('scope', '"Namespaced" or "Cluster"', scope);
  const versions = spec.list('versions').map((version): CrdVersion => {
    const served = version.optionalBoolean('served') ?? version.fail('served', 'true or false', undefined);
    const schema = version.optionalObject('schema')?.optionalObject('openAPIV3Schema');
    return {
      name: version.string('name'),
      served,
      deprecated: version.optionalBoolean('deprecated') ?? false,
      deprecationWarning: version.optionalString('deprecationWarning'),
      schema: schema === undefined ? undefined : readSchema(schema),
    };
  });
  return {
    name,
    group: spec.string('group'),
    kind: names.string('kind'),
    plural: names.string('plural'),
    shortNames: names.strings('shortNames') ?? [],
    namespaced: scope === 'Namespaced',
    versions,
  };
}

/** A schema, checked field by field (recursively); fields the generator does not read are left out. */
function readSchema(schema: Reader): CrdSchema {
  const fields = schema.fields();
  const read: { -readonly [K in keyof CrdSchema]: CrdSchema[K] } = {};
  read.type = schema.optionalString('type');
  read.format = schema.optionalString('format');
  read.description = schema.optionalString('description');
  read.nullable = schema.optionalBoolean('nullable');
  read.required = schema.strings('required');
  for (const flag of ['x-kubernetes-int-or-string', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource'] as const) read[flag] = schema.optionalBoolean(flag);
  read['x-kubernetes-list-type'] = schema.optionalString('x-kubernetes-list-type');
  read['x-kubernetes-list-map-keys'] = schema.strings('x-kubernetes-list-map-keys');
  if ('default' in fields) read.default = fields['default'];
  const values = schema.raw('enum');
  if (values !== undefined) {
    if (!Array.isArray(values)) schema.fail('enum', 'a list', values);
    read.enum = values;
  }
  const properties = schema.optionalObject('properties');
  if (properties !== undefined) {
    read.properties = Object.fromEntries(Object.keys(properties.fields()).map((key) => [key, readSchema(properties.object(key))]));
  }
  if (fields['items'] !== undefined) {
    if (Array.isArray(fields['items'])) schema.fail('items', 'one schema (a structural schema has no tuple items)', fields['items']);
    read.items = readSchema(schema.object('items'));
  }
  const additional = fields['additionalProperties'];
  if (typeof additional === 'boolean') read.additionalProperties = additional;
  else if (additional !== undefined) read.additionalProperties = readSchema(schema.object('additionalProperties'));
  return Object.fromEntries(Object.entries(read).filter(([, value]) => value !== undefined)) as CrdSchema;
}
