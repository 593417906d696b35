import type { KubeObject, OwnerReference } from '../../lib/base/object';
import { labelKeys, ownerKeys } from '../../lib/controller/relatedKeys';
import { defineResource } from '../../lib/resources/resource';
import { deployments } from '../../lib/resources/builtins';

/** The mappers from a related object to the keys of the primaries it stands for. */

const widgets = defineResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });
const clusterWidgets = defineResource({ group: 'example.com', version: 'v1', plural: 'clusterwidgets', kind: 'ClusterWidget', namespaced: false });

const ref = (kind: string, apiVersion: string, name: string, controller?: boolean): OwnerReference => ({ apiVersion, kind, name, uid: `uid-${name}`, ...(controller === undefined ? {} : { controller }) });
const object = (namespace: string | undefined, owners: OwnerReference[], labels?: Record<string, string>): KubeObject => ({
  metadata: { name: 'child', ...(namespace === undefined ? {} : { namespace }), ownerReferences: owners, ...(labels === undefined ? {} : { labels }) },
});

describe('ownerKeys', () => {
  it("keys a namespaced owner in the child's namespace, by group and kind whatever the version", () => {
    const child = object('shop', [ref('Widget', 'example.com/v1', 'a', true), ref('Widget', 'example.com/v1beta1', 'b', true), ref('Deployment', 'apps/v1', 'c', true)]);
    expect([...ownerKeys(widgets, { onlyController: false })(child)]).toEqual(['shop/a', 'shop/b']);
    expect([...ownerKeys(deployments)(child)]).toEqual(['shop/c']);
  });

  it('takes only the controller reference by default, as controller-runtime’s Owns does', () => {
    const child = object('shop', [ref('Widget', 'example.com/v1', 'a'), ref('Widget', 'example.com/v1', 'b', false), ref('Widget', 'example.com/v1', 'c', true)]);
    expect([...ownerKeys(widgets)(child)]).toEqual(['shop/c']);
  });

  it('keys a cluster-scoped owner by name, and gives a cluster-scoped child no namespaced owner', () => {
    expect([...ownerKeys(clusterWidgets)(object('shop', [ref('ClusterWidget', 'example.com/v1', 'global', true)]))]).toEqual(['global']);
    expect([...ownerKeys(widgets)(object(undefined, [ref('Widget', 'example.com/v1', 'a', true)]))]).toEqual([]);
  });

  it('tells the core group apart from a group named like its version', () => {
    const pods = defineResource({ group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true });
    expect([...ownerKeys(pods)(object('shop', [ref('Pod', 'v1', 'p', true), ref('Pod', 'v1/v1', 'q', true)]))]).toEqual(['shop/p']);
  });

  it('ignores malformed references rather than failing', () => {
    const child = { metadata: { name: 'child', namespace: 'shop', ownerReferences: [null, { kind: 'Widget' }, 'x'] } } as unknown as KubeObject;
    expect([...ownerKeys(widgets, { onlyController: false })(child)]).toEqual([]);
  });
});

describe('labelKeys', () => {
  it("keys the primary a label names, in the object's namespace for a namespaced primary", () => {
    expect([...labelKeys(widgets, 'example.com/widget')(object('shop', [], { 'example.com/widget': 'a' }))]).toEqual(['shop/a']);
    expect([...labelKeys(clusterWidgets, 'example.com/widget')(object('shop', [], { 'example.com/widget': 'global' }))]).toEqual(['global']);
  });

  it('keys nothing without the label, or with an empty value', () => {
    expect([...labelKeys(widgets, 'example.com/widget')(object('shop', [], { other: 'a' }))]).toEqual([]);
    expect([...labelKeys(widgets, 'example.com/widget')(object('shop', [], { 'example.com/widget': '' }))]).toEqual([]);
  });
});
