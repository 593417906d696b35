import { SharedMetadata } from '../../lib/sources/sharedMetadata';
import type { ObjectMeta } from '../../lib/base/object';

/** Equal labels and owner references shared between the objects of one metadata-only cache. */

const owner = () => [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d8f', uid: '0b7c6a3e-1f2d-4c5b-a6e7-8f9012345678', controller: true }];
const metadataOf = (name: string, labels: Record<string, string> = { app: 'web', tier: 'frontend' }): ObjectMeta => ({ name, namespace: 'ns', labels, ownerReferences: owner() });

describe('SharedMetadata', () => {
  it('gives objects with equal labels and owner references the same (frozen) values, deep-equal to what arrived', () => {
    const shared = new SharedMetadata();
    const a = shared.share(metadataOf('a'));
    const b = shared.share(metadataOf('b'));
    expect(b.labels).toBe(a.labels);
    expect(b.ownerReferences).toBe(a.ownerReferences);
    expect(b).toEqual(metadataOf('b'));
    expect(Object.isFrozen(a.ownerReferences)).toBe(true);
    expect(Object.isFrozen(a.ownerReferences![0])).toBe(true);
    expect(Object.isFrozen(a.labels)).toBe(true);
  });

  it('keeps different values apart, and labels apart from owner references', () => {
    const shared = new SharedMetadata();
    const a = shared.share(metadataOf('a'));
    const c = shared.share(metadataOf('c', { app: 'db' }));
    expect(c.labels).not.toBe(a.labels);
    expect(c.labels).toEqual({ app: 'db' });
    expect(c.ownerReferences).toBe(a.ownerReferences);
  });

  it('returns the metadata itself when it has nothing to share, and never adds absent fields', () => {
    const shared = new SharedMetadata();
    const bare: ObjectMeta = { name: 'bare' };
    expect(shared.share(bare)).toBe(bare);
    expect(Object.keys(shared.share({ name: 'x', labels: { a: '1' } }))).toEqual(['name', 'labels']);
  });

  it('starts afresh past its capacity, still answering equal values', () => {
    const shared = new SharedMetadata(2);
    const first = shared.share(metadataOf('a', { n: '1' }));
    shared.share(metadataOf('b', { n: '2' }));
    const again = shared.share(metadataOf('c', { n: '1' }));
    expect(again.labels).toEqual(first.labels);
    expect(again.labels).not.toBe(first.labels);
  });
});
