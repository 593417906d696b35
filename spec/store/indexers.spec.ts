import { fieldIndex, labelIndex, namespaceIndex, ownerIndex } from '../../lib/store/indexers';
import type { KubeObject } from '../../lib/base/object';

const pod = (metadata: Partial<KubeObject['metadata']>, rest: Record<string, unknown> = {}): KubeObject =>
  ({ metadata: { name: 'p', ...metadata }, ...rest }) as KubeObject;

describe('namespaceIndex', () => {
  it("yields the namespace, or '' for a cluster-scoped object (as client-go)", () => {
    expect(namespaceIndex(pod({ namespace: 'kube-system' }))).toEqual(['kube-system']);
    expect(namespaceIndex(pod({}))).toEqual(['']);
  });
});

describe('labelIndex', () => {
  it('yields the label value, or nothing without the label', () => {
    const byApp = labelIndex('app');
    expect(byApp(pod({ labels: { app: 'web' } }))).toEqual(['web']);
    expect(byApp(pod({ labels: { other: 'x' } }))).toEqual([]);
    expect(byApp(pod({}))).toEqual([]);
  });

  it('reads only own labels: constructor and __proto__ are harmless', () => {
    expect(labelIndex('constructor')(pod({ labels: {} }))).toEqual([]);
    const wire = JSON.parse('{"__proto__":"evil"}') as Record<string, string>;
    expect(labelIndex('__proto__')(pod({ labels: wire }))).toEqual(['evil']);
    expect(labelIndex('toString')(pod({ labels: wire }))).toEqual([]);
  });
});

describe('ownerIndex', () => {
  it('yields the uid of every owner reference', () => {
    const ref = (uid: string) => ({ apiVersion: 'v1', kind: 'ReplicaSet', name: uid, uid });
    expect(ownerIndex(pod({ ownerReferences: [ref('u1'), ref('u2')] }))).toEqual(['u1', 'u2']);
    expect(ownerIndex(pod({}))).toEqual([]);
  });

  it('skips malformed references instead of throwing', () => {
    expect(ownerIndex(pod({ ownerReferences: [null, { uid: 3 }, { uid: 'ok' }] as never }))).toEqual(['ok']);
  });
});

describe('fieldIndex', () => {
  it('yields the scalar at a dotted path', () => {
    expect(fieldIndex('spec.nodeName')(pod({}, { spec: { nodeName: 'n1' } }))).toEqual(['n1']);
    expect(fieldIndex('spec.replicas')(pod({}, { spec: { replicas: 3 } }))).toEqual(['3']);
    expect(fieldIndex('spec.paused')(pod({}, { spec: { paused: false } }))).toEqual(['false']);
  });

  it('yields each scalar of an array', () => {
    expect(fieldIndex('metadata.finalizers')(pod({ finalizers: ['a', 'b'] }))).toEqual(['a', 'b']);
  });

  it('yields nothing for missing paths, objects and inherited properties', () => {
    expect(fieldIndex('spec.nodeName')(pod({}))).toEqual([]);
    expect(fieldIndex('spec')(pod({}, { spec: { a: 1 } }))).toEqual([]);
    expect(fieldIndex('spec.constructor.name')(pod({}, { spec: {} }))).toEqual([]);
    expect(fieldIndex('__proto__.x')(pod({}))).toEqual([]);
  });

  it('rejects an empty path segment', () => {
    expect(() => fieldIndex('spec..x')).toThrow(TypeError);
  });
});
