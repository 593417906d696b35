import { field, FieldSet, keyed, parseElement, pathString, serializeElement, setItem } from '../../apiserver/src/fieldPath';

/**
 * Field paths and sets as server-side apply writes them in `managedFields[].fieldsV1`
 * (sigs.k8s.io/structured-merge-diff `fieldpath/serialize.go`, `serialize-pe.go`, `element.go`).
 */

describe('fieldsV1', () => {
  it('reads and writes a fields tree unchanged: "." first where a node is also a member, then elements in order', () => {
    const fieldsV1 = {
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:tier': {} } },
      'f:spec': {
        'f:containers': {
          'k:{"name":"app"}': { '.': {}, 'f:image': {}, 'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } } },
          'k:{"name":"sidecar"}': {},
        },
        'f:finalizers': { 'v:"a.example.com/x"': {}, 'v:"b.example.com/y"': {} },
      },
    };
    const set = FieldSet.fromFieldsV1(fieldsV1);
    expect(JSON.stringify(set.toFieldsV1())).toBe(JSON.stringify(fieldsV1));
  });

  it('orders member names, then keys, then values, then indices, each by its own order', () => {
    const set = FieldSet.of([{ kind: 'index', index: 2 }], [setItem('b')], [setItem(1)], [keyed([{ name: 'name', value: 'z' }])], [keyed([{ name: 'name', value: 'a' }])], [field('b')], [field('a')]);
    expect(Object.keys(set.toFieldsV1())).toEqual(['f:a', 'f:b', 'k:{"name":"a"}', 'k:{"name":"z"}', 'v:1', 'v:"b"', 'i:2']);
  });

  it.each([
    [keyed([{ name: 'protocol', value: 'TCP' }, { name: 'containerPort', value: 80 }]), 'k:{"containerPort":80,"protocol":"TCP"}', '[containerPort=80,protocol="TCP"]'],
    [setItem('<a&b>'), 'v:"\\u003ca\\u0026b\\u003e"', '[="<a&b>"]'],
    [field('example.com/team'), 'f:example.com/team', '.example.com/team'],
    [{ kind: 'index', index: 3 } as const, 'i:3', '[3]'],
  ])('writes %j as the key %s and in a conflict as %s', (element, key, text) => {
    expect(serializeElement(element)).toBe(key);
    expect(serializeElement(parseElement(key))).toBe(key);
    expect(pathString([field('spec'), element])).toBe(`.spec${text}`);
  });

  it('refuses keys that are none of the four element kinds, as the decoder does', () => {
    expect(() => parseElement('x')).toThrow('key must be 2 characters long:');
    expect(() => parseElement('fx')).toThrow('missing colon: fx');
    expect(() => parseElement('z:a')).toThrow('unknown path element type');
    expect(() => FieldSet.fromFieldsV1({ 'f:a': 1 })).toThrow('fieldsV1 f:a must map to a JSON object');
  });
});

describe('set operations', () => {
  const spec = field('spec');
  const set = FieldSet.of([spec, field('replicas')], [spec, field('template'), field('image')], [field('metadata')]);

  it('difference removes the same paths; recursive difference also everything under a member', () => {
    expect(set.difference(FieldSet.of([spec])).paths().map(pathString)).toEqual(['.metadata', '.spec.replicas', '.spec.template.image']);
    expect(set.recursiveDifference(FieldSet.of([spec])).paths().map(pathString)).toEqual(['.metadata']);
  });

  it('iterates the members of a node before the paths through its children', () => {
    expect(set.union(FieldSet.of([spec, field('a')])).paths().map(pathString)).toEqual(['.metadata', '.spec.a', '.spec.replicas', '.spec.template.image']);
  });

  it('makes every member name on a path a member itself (EnsureNamedFieldsAreMembers)', () => {
    expect(set.withFieldsAsMembers().paths().map(pathString)).toEqual(['.metadata', '.spec', '.spec.replicas', '.spec.template', '.spec.template.image']);
  });

  it('is empty when no node has a member', () => {
    expect(set.intersection(FieldSet.of([spec, field('other')])).empty).toBe(true);
    expect(set.intersection(FieldSet.of([spec, field('replicas')])).paths().map(pathString)).toEqual(['.spec.replicas']);
  });
});
