import { toPartialObjectMetadata } from '../../lib/sources/partialObjectMetadata';
import type { KubeObject } from '../../lib/base/object';

/** Reducing what the server sent (converted or whole) to the PartialObjectMetadata the cache keeps. */

const managedFields = [{ manager: 'kubectl', operation: 'Update' }];
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

const wholePod = (): KubeObject & { spec: object } => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'a', namespace: 'ns', uid: 'u1', resourceVersion: '5', labels: { app: 'web' }, annotations: { [LAST_APPLIED]: '{...}', note: 'n' }, managedFields },
  spec: { containers: [] },
});

describe('toPartialObjectMetadata', () => {
  it('reduces a whole object to apiVersion, kind and metadata, leaving managedFields out', () => {
    const reduced = toPartialObjectMetadata(wholePod());
    expect(reduced).toEqual({
      apiVersion: 'meta.k8s.io/v1',
      kind: 'PartialObjectMetadata',
      metadata: { name: 'a', namespace: 'ns', uid: 'u1', resourceVersion: '5', labels: { app: 'web' }, annotations: { [LAST_APPLIED]: '{...}', note: 'n' } },
    });
    expect(Object.keys(reduced)).toEqual(['apiVersion', 'kind', 'metadata']);
    expect(Object.hasOwn(reduced.metadata, 'managedFields')).toBe(false);
  });

  it('gives a converted object and the whole object the same result', () => {
    const whole = wholePod();
    const converted: KubeObject = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: whole.metadata };
    expect(toPartialObjectMetadata(converted)).toEqual(toPartialObjectMetadata(whole));
  });

  it('keeps managedFields when asked to', () => {
    expect(toPartialObjectMetadata(wholePod(), { keepManagedFields: true }).metadata.managedFields).toBe(managedFields);
  });

  it('leaves the named annotations out and keeps the others, without touching the input', () => {
    const whole = wholePod();
    const reduced = toPartialObjectMetadata(whole, { dropAnnotations: [LAST_APPLIED] });
    expect(reduced.metadata.annotations).toEqual({ note: 'n' });
    expect(reduced.metadata.managedFields).toBeUndefined();
    expect(whole.metadata.annotations).toEqual({ [LAST_APPLIED]: '{...}', note: 'n' });
    expect(whole.metadata.managedFields).toBe(managedFields);
  });

  it('keeps managedFields and drops annotations together when asked to', () => {
    const reduced = toPartialObjectMetadata(wholePod(), { keepManagedFields: true, dropAnnotations: ['note'] });
    expect(reduced.metadata.managedFields).toBe(managedFields);
    expect(reduced.metadata.annotations).toEqual({ [LAST_APPLIED]: '{...}' });
  });

  it('shares the metadata object when nothing is left out of it, and adds no managedFields key', () => {
    const lean: KubeObject = { metadata: { name: 'b', labels: { app: 'web' } } };
    expect(toPartialObjectMetadata(lean).metadata).toBe(lean.metadata);
    expect(toPartialObjectMetadata(lean, { dropAnnotations: [LAST_APPLIED] }).metadata).toBe(lean.metadata);
    const withAnnotations: KubeObject = { metadata: { name: 'c', annotations: { note: 'n' } } };
    expect(Object.keys(toPartialObjectMetadata(withAnnotations, { dropAnnotations: ['note'] }).metadata)).toEqual(['name', 'annotations']);
  });

  it('keeps a bookmark readable: its resourceVersion and the initial-events-end annotation', () => {
    const bookmark: KubeObject = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion: '42', annotations: { 'k8s.io/initial-events-end': 'true' } } as unknown as KubeObject['metadata'] };
    expect(toPartialObjectMetadata(bookmark).metadata).toEqual({ resourceVersion: '42', annotations: { 'k8s.io/initial-events-end': 'true' } });
  });
});
