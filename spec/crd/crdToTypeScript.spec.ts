import { CrdError } from '../../lib/crd/customResourceDefinition';
import { crdToTypeScript, customResourceDefinitionsIn } from '../../lib/crd/crdToTypeScript';
import { REPO, scratchFolder, typeErrors, type Scratch } from '../docs/snippets';

/**
 * The generator, on a hand-written CRD holding every construct it maps: the text it writes, and,
 * compiled under the repository's strict options, what the types accept and refuse.
 */

type Schema = Record<string, unknown>;

function crd(schema: Schema, overrides: { group?: string; kind?: string; plural?: string; scope?: string; versions?: Record<string, unknown>[] } = {}): Record<string, unknown> {
  const group = overrides.group ?? 'example.com';
  const plural = overrides.plural ?? 'widgets';
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: { kind: overrides.kind ?? 'Widget', plural, singular: 'widget', shortNames: ['wd'] },
      scope: overrides.scope ?? 'Namespaced',
      versions: overrides.versions ?? [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
    },
  };
}

/** Every construct of the generator, in one schema. */
const everything: Schema = {
  type: 'object',
  description: 'A Widget: a thing that is */ not a gadget.',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      required: ['size'],
      properties: {
        size: { type: 'integer', format: 'int32', description: 'How big.\n@sensitive is not a tag here.' },
        color: { type: 'string', enum: ['red', 'green', "it's blue"], default: 'red' },
        nickname: { type: 'string', nullable: true },
        port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
        since: { type: 'string', format: 'date-time' },
        settings: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        anything: { 'x-kubernetes-preserve-unknown-fields': true },
        tuning: { type: 'object', properties: { level: { type: 'integer' } }, 'x-kubernetes-preserve-unknown-fields': true },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
          items: { type: 'object', required: ['containerPort'], properties: { containerPort: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' }, name: { type: 'string' } } },
        },
        tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        limits: { type: 'object', additionalProperties: { type: 'object', properties: { max: { type: 'number' } } } },
        matrix: { type: 'array', items: { type: 'array', items: { type: 'object', properties: { cell: { type: 'boolean' } } } } },
        nothing: { type: 'object' },
        'x-vendor': { type: 'string' },
        levels: { type: 'array', items: { type: 'integer', enum: [1, 2, 3] } },
        maybeList: { type: 'array', nullable: true, items: { type: 'string', nullable: true } },
        mode: { type: 'string', nullable: true, enum: ['fast', null] },
      },
    },
    status: { type: 'object', properties: { phase: { type: 'string' } } },
  },
};

describe('crdToTypeScript', () => {
  let scratch: Scratch;
  beforeAll(() => {
    scratch = scratchFolder();
  });
  afterAll(() => scratch.remove());

  /** Compiles the generated module with `usage` beside it (importing from it); the errors in either. */
  function compile(name: string, generated: string, usage: string): string[] {
    const module = scratch.write(`${name}.ts`, generated.replace("from 'rx-informer'", `from ${JSON.stringify(`${REPO}/lib/index`)}`));
    const user = scratch.write(`${name}.usage.ts`, usage.replaceAll("from './generated'", `from './${name}'`));
    return typeErrors([module, user]);
  }

  it('writes a module whose types accept the objects the API server serves and refuse others, under strict', () => {
    const generated = crdToTypeScript([crd(everything)]);
    const usage = `
import type { WidgetV1, WidgetV1Spec, WidgetV1SpecPorts } from './generated';
import { widgetsV1 } from './generated';
import type { Resource } from ${JSON.stringify(`${REPO}/lib/index`)};

const resource: Resource<WidgetV1> = widgetsV1;
const widget: WidgetV1 = {
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w', namespace: 'default' },
  spec: {
    size: 3,
    color: "it's blue",
    nickname: null,
    port: 'http',
    since: '2026-01-01T00:00:00Z',
    settings: { anything: [1, 'two'] },
    anything: 42,
    tuning: { level: 2, extra: true },
    template: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } },
    ports: [{ containerPort: 80, protocol: 'TCP' }],
    tags: ['a'],
    labels: { app: 'web' },
    limits: { cpu: { max: 2 } },
    matrix: [[{ cell: true }]],
    nothing: {},
    'x-vendor': 'v',
    levels: [1, 3],
    maybeList: [null, 'x'],
  },
  status: { phase: 'Ready' },
};
const numericPort: WidgetV1Spec['port'] = 8080;
const templateWithoutMetadata: WidgetV1Spec['template'] = { apiVersion: 'v1', kind: 'Secret' };
const maybeNull: WidgetV1Spec['maybeList'] = null;

// @ts-expect-error apiVersion is the version's own
const wrongVersion: WidgetV1['apiVersion'] = 'example.com/v2';
// @ts-expect-error size is required
const noSize: WidgetV1Spec = {};
// @ts-expect-error an enum takes its values only
const purple: WidgetV1Spec['color'] = 'purple';
// @ts-expect-error int-or-string takes no boolean
const booleanPort: WidgetV1Spec['port'] = true;
// @ts-expect-error a list-map key is required in its item, even with a default
const noProtocol: WidgetV1SpecPorts = { containerPort: 80 };
// @ts-expect-error an embedded resource has a kind
const noKind: WidgetV1Spec['template'] = { apiVersion: 'v1' };
// @ts-expect-error a closed object has no unknown fields
const extraStatus: WidgetV1['status'] = { phase: 'Ready', extra: 1 };
// @ts-expect-error a map holds its value type
const numericLabel: WidgetV1Spec['labels'] = { app: 1 };
// @ts-expect-error an object without properties, not open, is empty
const somethingInNothing: WidgetV1Spec['nothing'] = { a: 1 };
// @ts-expect-error a date-time is a string on the wire, not a Date
const dateObject: WidgetV1Spec['since'] = new Date();
// @ts-expect-error cached objects are read-only
widget.spec!.size = 4;

export { resource, widget, numericPort, templateWithoutMetadata, maybeNull, wrongVersion, noSize, purple, booleanPort, noProtocol, noKind, extraStatus, numericLabel, somethingInNothing, dateObject };
`;
    expect(compile('everything', generated, usage)).toEqual([]);
  }, 60_000);

  it('names types after their path, and notes each extension in the JSDoc', () => {
    const generated = crdToTypeScript([crd(everything)]);
    expect(generated).toContain("import { defineResource, type KubeObject, type ObjectMeta, type Resource } from 'rx-informer';");
    expect(generated).toContain('export interface WidgetV1 extends KubeObject {\n  readonly apiVersion: \'example.com/v1\';\n  readonly kind: \'Widget\';\n');
    expect(generated).toContain('  readonly spec?: WidgetV1Spec;\n');
    expect(generated).toContain('  readonly ports?: readonly WidgetV1SpecPorts[];\n');
    expect(generated).toContain('  readonly matrix?: readonly (readonly WidgetV1SpecMatrixItem[])[];\n');
    expect(generated).toContain('  readonly limits?: { readonly [key: string]: WidgetV1SpecLimitsValue };\n');
    expect(generated).toContain("  readonly 'x-vendor'?: string;\n");
    expect(generated).toContain('  readonly nickname?: string | null;\n');
    expect(generated).toContain('  readonly maybeList?: readonly (string | null)[] | null;\n');
    expect(generated).toContain('  readonly nothing?: Readonly<Record<string, never>>;\n');
    expect(generated).toContain('  readonly anything?: unknown;\n');
    expect(generated).toContain('  readonly levels?: readonly (1 | 2 | 3)[];\n');
    expect(generated).toContain("  readonly mode?: 'fast' | null;\n");
    // A list-map's item type says why its keys are required.
    expect(generated).toContain(
      '/** `spec.ports[]` of `example.com/v1` Widget. An item of a list-map keyed by `containerPort` and `protocol` (`x-kubernetes-list-map-keys`): those keys are always present, and unique together across the list. */\nexport interface WidgetV1SpecPorts {',
    );
    expect(generated).toContain('A list-map keyed by `containerPort` and `protocol` (`x-kubernetes-list-type: map`): at most one item per key.');
    expect(generated).toContain('A set (`x-kubernetes-list-type: set`): no item twice.');
    expect(generated).toContain('Format `date-time`: an RFC 3339 timestamp, a string on the wire.');
    expect(generated).toContain('An integer or a string (`x-kubernetes-int-or-string`).');
    expect(generated).toContain('Default: `"red"`.');
    expect(generated).toContain('An embedded Kubernetes object (`x-kubernetes-embedded-resource`)');
    expect(generated).toContain('Fields beyond those listed are kept (`x-kubernetes-preserve-unknown-fields`).');
    // A description can neither close the comment nor start a tag.
    expect(generated).toContain(' * A Widget: a thing that is *\\/ not a gadget.\n');
    expect(generated).toContain('   * \\@sensitive is not a tag here.\n');
    expect(generated).toContain(
      "/** `example.com/v1` widgets (namespaced; short name `wd`): the resource of {@link WidgetV1}. */\nexport const widgetsV1: Resource<WidgetV1> = defineResource<WidgetV1>({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });\n",
    );
  });

  it('writes every served version, marks deprecated ones, and skips the others', () => {
    const schema = { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } };
    const generated = crdToTypeScript([
      crd(schema, {
        scope: 'Cluster',
        versions: [
          { name: 'v1alpha1', served: false, storage: false, schema: { openAPIV3Schema: schema } },
          { name: 'v1beta1', served: true, storage: false, deprecated: true, deprecationWarning: 'use example.com/v1 Widget', schema: { openAPIV3Schema: schema } },
          { name: 'v1', served: true, storage: true },
        ],
      }),
    ]);
    expect(generated).not.toContain('V1alpha1');
    expect(generated).toContain(' * @deprecated use example.com/v1 Widget\n */\nexport interface WidgetV1beta1 extends KubeObject {');
    expect(generated).toContain('namespaced: false });');
    // A version without a schema takes any fields.
    expect(generated).toContain("export interface WidgetV1 extends KubeObject {\n  readonly apiVersion: 'example.com/v1';\n  readonly kind: 'Widget';\n  readonly [key: string]: unknown;\n}");
    expect(generated).not.toContain('ObjectMeta');
    expect(compile('versions', generated, "import { widgetsV1beta1, widgetsV1 } from './generated';\nexport const all = [widgetsV1beta1, widgetsV1];\n")).toEqual([]);
  }, 60_000);

  it('gives colliding names numbers, across the CRDs of one module, and imports from where it is told', () => {
    const schema = { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } } };
    const generated = crdToTypeScript([crd(schema), crd(schema, { group: 'other.example.com' })], { importFrom: '@acme/rx' });
    expect(generated).toContain("from '@acme/rx';");
    expect(generated).toContain('export interface WidgetV1 extends KubeObject');
    expect(generated).toContain('export interface WidgetV12 extends KubeObject');
    expect(generated).toContain('export interface WidgetV12Spec {');
    expect(generated).toContain('export const widgetsV12: Resource<WidgetV12>');
    expect(generated).toContain('from the CustomResourceDefinitions widgets.example.com, widgets.other.example.com.');
  });

  it('is deterministic: the same CRDs give the same text', () => {
    expect(crdToTypeScript([crd(everything)])).toBe(crdToTypeScript([structuredClone(crd(everything))]));
  });

  it('takes every CRD among documents, in a List too, and passes over other kinds and empty documents', () => {
    const documents = [null, { kind: 'Namespace', metadata: { name: 'x' } }, { apiVersion: 'v1', kind: 'List', items: [crd(everything), { kind: 'ConfigMap' }] }];
    expect(customResourceDefinitionsIn(documents)).toEqual([crd(everything)]);
    expect(() => crdToTypeScript([{ kind: 'Namespace' }])).toThrow(new CrdError('no CustomResourceDefinition among the documents given'));
  });

  it.each<[string, (value: Record<string, unknown>) => unknown, string]>([
    ['a v1beta1 CRD', (value) => ({ ...value, apiVersion: 'apiextensions.k8s.io/v1beta1' }), 'widgets.example.com: apiVersion: expected "apiextensions.k8s.io/v1" (v1beta1 CRDs are served no more since Kubernetes 1.22), got "apiextensions.k8s.io/v1beta1"'],
    ['a scope that is neither', (value) => ({ ...value, spec: { ...(value['spec'] as object), scope: 'Global' } }), 'widgets.example.com: spec.scope: expected "Namespaced" or "Cluster", got "Global"'],
    ['a version without served', (value) => ({ ...value, spec: { ...(value['spec'] as object), versions: [{ name: 'v1' }] } }), 'widgets.example.com: spec.versions[0].served: expected true or false, got nothing'],
    ['a property that is not a schema', () => crd({ type: 'object', properties: { spec: 'big' } }), 'widgets.example.com: spec.versions[0].schema.openAPIV3Schema.properties.spec: expected an object, got "big"'],
    ['tuple items', () => crd({ type: 'object', properties: { pair: { type: 'array', items: [{ type: 'string' }] } } }), 'widgets.example.com: spec.versions[0].schema.openAPIV3Schema.properties.pair.items: expected one schema (a structural schema has no tuple items), got [{"type":"string"}]'],
    ['required that is not a list', () => crd({ type: 'object', required: 'spec' }), 'widgets.example.com: spec.versions[0].schema.openAPIV3Schema.required: expected a list of strings, got "spec"'],
  ])('refuses %s, naming the field', (_, change, message) => {
    expect(() => crdToTypeScript([change(crd(everything))])).toThrow(new CrdError(message));
  });

  it('refuses CRDs with no served version', () => {
    expect(() => crdToTypeScript([crd(everything, { versions: [{ name: 'v1', served: false }] })])).toThrow(new CrdError('widgets.example.com: no version is served'));
  });
});
