import { ProtocolError } from '../../lib/base/errors';
import { objectKey, splitKey } from '../../lib/store/keys';
import type { KubeObject } from '../../lib/base/object';

describe('objectKey', () => {
  it('is namespace/name for a namespaced object', () => {
    expect(objectKey({ metadata: { name: 'web', namespace: 'default' } })).toBe('default/web');
  });

  it('is the name alone for a cluster-scoped object (no or empty namespace)', () => {
    expect(objectKey({ metadata: { name: 'node-1' } })).toBe('node-1');
    expect(objectKey({ metadata: { name: 'node-1', namespace: '' } })).toBe('node-1');
  });

  it.each([[{}], [{ metadata: {} }], [{ metadata: { name: '' } }], [{ metadata: { name: 7 } }], [null]])(
    'throws a ProtocolError (missing-metadata) for %j',
    (object) => {
      let caught: unknown;
      try {
        objectKey(object as unknown as KubeObject);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ProtocolError);
      expect((caught as ProtocolError).problem).toBe('missing-metadata');
    },
  );
});

describe('splitKey', () => {
  it('splits namespace/name', () => {
    expect(splitKey('default/web')).toEqual({ namespace: 'default', name: 'web' });
  });

  it("gives '' as the namespace of a cluster-scoped key", () => {
    expect(splitKey('node-1')).toEqual({ namespace: '', name: 'node-1' });
  });

  it('inverts objectKey', () => {
    for (const metadata of [{ name: 'a', namespace: 'ns' }, { name: 'b' }]) {
      const { namespace, name } = splitKey(objectKey({ metadata }));
      expect({ namespace, name }).toEqual({ namespace: metadata.namespace ?? '', name: metadata.name });
    }
  });

  /**
   * client-go's SplitMetaNamespaceKey (tools/cache/store.go) splits on every '/': one part is a
   * name, two are namespace and name, anything else is an error. It checks nothing else, so an
   * empty key or an empty part passes. The table is its behaviour, case by case.
   */
  it.each<[string, { namespace: string; name: string }]>([
    ['default/web', { namespace: 'default', name: 'web' }],
    ['node-1', { namespace: '', name: 'node-1' }],
    ['', { namespace: '', name: '' }],
    ['/web', { namespace: '', name: 'web' }],
    ['default/', { namespace: 'default', name: '' }],
    ['/', { namespace: '', name: '' }],
    ['a b/c:d', { namespace: 'a b', name: 'c:d' }],
  ])('accepts %j as client-go does: %j', (key, parts) => {
    expect(splitKey(key)).toEqual(parts);
  });

  it.each(['a/b/c', '//', 'a//', '/a/b', 'a/b/', 'a/b/c/d'])('rejects %j (more than one /) with a TypeError, as client-go returns an error', (key) => {
    expect(() => splitKey(key)).toThrow(new TypeError(`unexpected key format: ${JSON.stringify(key)}`));
  });
});
