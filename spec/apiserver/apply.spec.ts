import { configMaps, deployments, pods } from '../../lib/resources/builtins';
import { widgets } from '../../apiserver/src/builtinResources';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { call, openWatch, type Reply } from './httpHelpers';

/**
 * Server-side apply as the API server answers it: `PATCH` with `application/apply-patch+yaml`
 * (apiserver `endpoints/handlers/patch.go`, `applyPatcher`), merged and owned by the field
 * manager (apimachinery `util/managedfields/internal`, sigs.k8s.io/structured-merge-diff
 * `merge/update.go`). Each expectation is the API server's: the fieldsV1 it records, the
 * conflicts it words, the fields it removes.
 */

let server: ApiServer;

beforeEach(async () => {
  server = await startApiServer();
});

afterEach(() => server.close());

const APPLY = { 'Content-Type': 'application/apply-patch+yaml' };
const DEPLOYMENT = '/apis/apps/v1/namespaces/default/deployments/web';
const CONFIG_MAP = '/api/v1/namespaces/default/configmaps/settings';

function apply(path: string, body: unknown, query: string): Promise<Reply> {
  return call(server, 'PATCH', `${path}?${query}`, { body: typeof body === 'string' ? body : JSON.stringify(body), headers: APPLY });
}

/** The managed fields without their times (the clock's). */
function owners(object: { metadata: { managedFields?: { time?: string }[] } }): unknown[] {
  return (object.metadata.managedFields ?? []).map(({ time: _time, ...entry }) => entry);
}

const deployment = (spec: object, metadata: object = {}): object => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', ...metadata },
  spec,
});

const webSpec = (image: string, replicas = 2): object => ({
  replicas,
  selector: { matchLabels: { app: 'web' } },
  template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image, ports: [{ containerPort: 8080 }] }] } },
});

const configMap = (data: Record<string, string>, metadata: object = {}): object => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', ...metadata }, data });

describe('apply creates, and re-applies without change', () => {
  it('creates a missing object (201) owned by the applier, list items by key, a defaulted key field (protocol) included', async () => {
    const created = await apply(DEPLOYMENT, deployment(webSpec('app:1'), { labels: { tier: 'front' } }), 'fieldManager=ci');
    expect(created.status).toBe(201);
    expect(created.json.spec.template.spec.containers).toEqual([{ name: 'app', image: 'app:1', ports: [{ containerPort: 8080 }] }]);
    expect(created.json.metadata).toMatchObject({ name: 'web', namespace: 'default', generation: 1 });
    expect(created.json.metadata.managedFields[0].time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(owners(created.json)).toEqual([
      {
        manager: 'ci',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { 'f:tier': {} } },
          'f:spec': {
            'f:replicas': {},
            'f:selector': {},
            'f:template': {
              'f:metadata': { 'f:labels': { 'f:app': {} } },
              'f:spec': {
                'f:containers': {
                  'k:{"name":"app"}': {
                    '.': {},
                    'f:image': {},
                    'f:name': {},
                    'f:ports': { 'k:{"containerPort":8080,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
                  },
                },
              },
            },
          },
        },
      },
    ]);
    expect(server.store.get(deployments, 'default', 'web')?.metadata.managedFields).toEqual(created.json.metadata.managedFields);
  });

  it('answers a re-apply of the same configuration with the stored object: no write, no watch event', async () => {
    const first = await apply(DEPLOYMENT, deployment(webSpec('app:1')), 'fieldManager=ci');
    const watch = await openWatch(server, `/apis/apps/v1/namespaces/default/deployments?watch=1&resourceVersion=${first.json.metadata.resourceVersion}`);
    try {
      const again = await apply(DEPLOYMENT, deployment(webSpec('app:1')), 'fieldManager=ci');
      expect([again.status, again.json.metadata.resourceVersion, again.json.metadata.managedFields]).toEqual([200, first.json.metadata.resourceVersion, first.json.metadata.managedFields]);
      const changed = await apply(DEPLOYMENT, deployment(webSpec('app:2')), 'fieldManager=ci');
      await watch.untilLines(1);
      expect(watch.events.map((e) => [e.type, e.object.metadata.resourceVersion])).toEqual([['MODIFIED', changed.json.metadata.resourceVersion]]);
    } finally {
      watch.close();
    }
  });

  it('reads YAML as the API server does: block style, comments, YAML 1.1 booleans, timestamps left as strings', async () => {
    const yaml = [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: settings',
      '  annotations:',
      '    released: 2024-01-02 # a timestamp to YAML, a string to the API server',
      'data:',
      '  mode: fast',
      '  enabled: "yes"',
    ].join('\n');
    const reply = await apply(CONFIG_MAP, yaml, 'fieldManager=ci');
    expect(reply.status).toBe(201);
    expect([reply.json.metadata.annotations, reply.json.data]).toEqual([{ released: '2024-01-02' }, { mode: 'fast', enabled: 'yes' }]);
  });
});

describe('conflicts', () => {
  interface ConflictCase {
    readonly owner: () => Promise<unknown>;
    readonly path: string;
    readonly applied: object;
    readonly message: string;
    readonly causes: readonly { readonly message: string; readonly field: string }[];
  }

  const cases: readonly (readonly [string, ConflictCase])[] = [
    [
      'another applier',
      {
        owner: () => apply(DEPLOYMENT, deployment(webSpec('app:1', 2)), 'fieldManager=ci'),
        path: DEPLOYMENT,
        applied: deployment({ replicas: 5 }),
        message: 'Apply failed with 1 conflict: conflict with "ci": .spec.replicas',
        causes: [{ message: 'conflict with "ci"', field: '.spec.replicas' }],
      },
    ],
    [
      'an updater (its API version named)',
      {
        owner: async () => {
          await apply(DEPLOYMENT, deployment(webSpec('app:1', 2)), 'fieldManager=ci');
          await call(server, 'PATCH', `${DEPLOYMENT}?fieldManager=kubectl-edit`, { body: { spec: { replicas: 3 } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
        },
        path: DEPLOYMENT,
        applied: deployment({ replicas: 5 }),
        message: 'Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: .spec.replicas',
        causes: [{ message: 'conflict with "kubectl-edit" using apps/v1', field: '.spec.replicas' }],
      },
    ],
    [
      'a list item field, by key',
      {
        owner: () => apply(DEPLOYMENT, deployment(webSpec('app:1')), 'fieldManager=ci'),
        path: DEPLOYMENT,
        applied: deployment({ template: { spec: { containers: [{ name: 'app', image: 'app:9' }] } } }),
        message: 'Apply failed with 1 conflict: conflict with "ci": .spec.template.spec.containers[name="app"].image',
        causes: [{ message: 'conflict with "ci"', field: '.spec.template.spec.containers[name="app"].image' }],
      },
    ],
    [
      'two managers, two fields (grouped by manager in the message)',
      {
        owner: async () => {
          await apply(CONFIG_MAP, configMap({ x: '1' }), 'fieldManager=alpha');
          await apply(CONFIG_MAP, configMap({ y: '1' }), 'fieldManager=beta');
        },
        path: CONFIG_MAP,
        applied: configMap({ x: '2', y: '2' }),
        message: 'Apply failed with 2 conflicts: conflicts with "alpha":\n- .data.x\nconflicts with "beta":\n- .data.y',
        causes: [
          { message: 'conflict with "alpha"', field: '.data.x' },
          { message: 'conflict with "beta"', field: '.data.y' },
        ],
      },
    ],
    [
      'the status subresource (named with it)',
      {
        owner: async () => {
          server.store.create(pods, { metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'c' }] } });
          await apply('/api/v1/namespaces/default/pods/p/status', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, status: { phase: 'Running' } }, 'fieldManager=kubelet');
        },
        path: '/api/v1/namespaces/default/pods/p/status',
        applied: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, status: { phase: 'Failed' } },
        message: 'Apply failed with 1 conflict: conflict with "kubelet" with subresource "status": .status.phase',
        causes: [{ message: 'conflict with "kubelet" with subresource "status"', field: '.status.phase' }],
      },
    ],
  ];

  it.each(cases)('answers 409 naming each field and its manager when %s owns a field with another value, and changes nothing', async (_case, c) => {
    await c.owner();
    const path = c.path.replace(/\/status$/, '');
    const before = (await call(server, 'GET', path)).json;
    const refused = await apply(c.path, c.applied, 'fieldManager=intruder');
    expect(refused.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: c.message,
      reason: 'Conflict',
      details: { causes: c.causes.map((cause) => ({ reason: 'FieldManagerConflict', ...cause })) },
      code: 409,
    });
    expect((await call(server, 'GET', path)).json).toEqual(before);
  });

  it('with force, moves the fields to the applier: the other manager loses them and the values change', async () => {
    await apply(DEPLOYMENT, deployment(webSpec('app:1', 2)), 'fieldManager=ci');
    const forced = await apply(DEPLOYMENT, deployment({ replicas: 5 }), 'fieldManager=autoscaler&force=true');
    expect([forced.status, forced.json.spec.replicas, forced.json.metadata.generation]).toEqual([200, 5, 2]);
    const byManager = Object.fromEntries(owners(forced.json).map((e) => [(e as { manager: string }).manager, (e as { fieldsV1: { 'f:spec': object } }).fieldsV1['f:spec']]));
    expect(byManager['autoscaler']).toEqual({ 'f:replicas': {} });
    expect(byManager['ci']).not.toHaveProperty('f:replicas');
    expect(byManager['ci']).toHaveProperty('f:template');
  });

  it('shares a field set to the value it has: both managers own it, and it stays while either does', async () => {
    await apply(CONFIG_MAP, configMap({ shared: 'v', mine: 'a' }), 'fieldManager=alpha');
    const shared = await apply(CONFIG_MAP, configMap({ shared: 'v' }), 'fieldManager=beta');
    expect(shared.status).toBe(200);
    // beta's apply changed no field, so its entry has no time, and sorts before alpha's (managedfields.go sorts by time).
    expect(shared.json.metadata.managedFields.map((e: { manager: string; time?: string; fieldsV1: object }) => [e.manager, e.time === undefined, e.fieldsV1])).toEqual([
      ['beta', true, { 'f:data': { 'f:shared': {} } }],
      ['alpha', false, { 'f:data': { 'f:mine': {}, 'f:shared': {} } }],
    ]);
    // alpha lets go of both: mine goes, shared stays (beta owns it).
    const dropped = await apply(CONFIG_MAP, configMap({}), 'fieldManager=alpha');
    expect(dropped.json.data).toEqual({ shared: 'v' });
  });

  it('conflicts with before-first-apply over an object that had no managed fields', async () => {
    server.store.create(configMaps, { metadata: { name: 'settings', namespace: 'default' }, data: { mode: 'slow' } });
    const refused = await apply(CONFIG_MAP, configMap({ mode: 'fast' }), 'fieldManager=ci');
    expect([refused.status, refused.json.message]).toEqual([409, 'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.mode']);
    const agreed = await apply(CONFIG_MAP, configMap({ mode: 'slow' }), 'fieldManager=ci');
    expect(owners(agreed.json).map((e) => [(e as { manager: string }).manager, (e as { operation: string }).operation])).toEqual([
      ['ci', 'Apply'],
      ['before-first-apply', 'Update'],
    ]);
  });
});

describe('what an applier stops applying', () => {
  it('removes the fields and list items it owned alone, and keeps what another manager owns too', async () => {
    await apply(
      DEPLOYMENT,
      deployment({ ...webSpec('app:1'), template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'app:1' }, { name: 'proxy', image: 'proxy:1' }] } } }, { labels: { a: '1', b: '2' } }),
      'fieldManager=ci',
    );
    // Another applier shares the label b.
    await apply(DEPLOYMENT, deployment({}, { labels: { b: '2' } }), 'fieldManager=labeler');
    const next = await apply(DEPLOYMENT, deployment({ ...webSpec('app:1'), template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } } }), 'fieldManager=ci');
    expect(next.status).toBe(200);
    expect(next.json.metadata.labels).toEqual({ b: '2' });
    expect(next.json.spec.template.spec.containers.map((c: { name: string }) => c.name)).toEqual(['app']);
    expect(next.json.spec.replicas).toBe(2);
  });

  it('keeps what it drops when an updater changed it since', async () => {
    await apply(CONFIG_MAP, configMap({ a: '1', b: '1' }), 'fieldManager=ci');
    await call(server, 'PATCH', `${CONFIG_MAP}?fieldManager=editor`, { body: { data: { b: '2' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    const next = await apply(CONFIG_MAP, configMap({ a: '1' }), 'fieldManager=ci');
    expect(next.json.data).toEqual({ a: '1', b: '2' });
  });
});

describe("kubectl's own apply over its client-side apply (last-applied-configuration)", () => {
  const lastApplied = (data: Record<string, string>): string => `${JSON.stringify({ apiVersion: 'v1', data, kind: 'ConfigMap', metadata: { annotations: {}, name: 'settings', namespace: 'default' } })}\n`;

  beforeEach(async () => {
    const created = await call(server, 'POST', '/api/v1/namespaces/default/configmaps?fieldManager=kubectl-client-side-apply', {
      body: configMap({ mode: 'slow' }, { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied({ mode: 'slow' }) } }),
    });
    expect(created.status).toBe(201);
  });

  it('takes over what the annotation applied, without conflicts, and keeps the annotation current', async () => {
    const reply = await apply(CONFIG_MAP, configMap({ mode: 'fast' }), 'fieldManager=kubectl');
    expect([reply.status, reply.json.data]).toEqual([200, { mode: 'fast' }]);
    expect(JSON.parse(reply.json.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'])).toEqual({ apiVersion: 'v1', data: { mode: 'fast' }, kind: 'ConfigMap', metadata: { name: 'settings' } });
  });

  it('is a conflict for any other manager', async () => {
    const reply = await apply(CONFIG_MAP, configMap({ mode: 'fast' }), 'fieldManager=ci');
    expect([reply.status, reply.json.message]).toEqual([409, 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.mode']);
  });
});

describe('custom resources', () => {
  const WIDGET = '/apis/example.com/v1/namespaces/default/widgets/w';
  const widget = (spec: object): object => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec });

  it('creates, conflicts and forces as built-ins do, with the CRD generation rule (anything but metadata)', async () => {
    const created = await apply(WIDGET, widget({ size: 1, color: 'red' }), 'fieldManager=ci');
    expect([created.status, owners(created.json)]).toEqual([201, [{ manager: 'ci', operation: 'Apply', apiVersion: 'example.com/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:color': {}, 'f:size': {} } } }]]);
    const refused = await apply(WIDGET, widget({ size: 2 }), 'fieldManager=scaler');
    expect([refused.status, refused.json.message]).toEqual([409, 'Apply failed with 1 conflict: conflict with "ci": .spec.size']);
    const forced = await apply(WIDGET, widget({ size: 2 }), 'fieldManager=scaler&force=true');
    expect([forced.status, forced.json.spec, forced.json.metadata.generation]).toEqual([200, { size: 2, color: 'red' }, 2]);
    const labelled = await apply(WIDGET, { ...widget({ size: 2 }), metadata: { name: 'w', labels: { a: 'b' } } }, 'fieldManager=scaler');
    expect([labelled.json.metadata.labels, labelled.json.metadata.generation]).toEqual([{ a: 'b' }, 2]);
    expect(server.store.get(widgets, 'default', 'w')?.spec).toEqual({ size: 2, color: 'red' });
  });
});

describe('refusals, in the order and words of the API server', () => {
  const cases: readonly (readonly [string, string, string | object, string, number, string | RegExp])[] = [
    ['no fieldManager', CONFIG_MAP, configMap({}), '', 422, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'],
    ['a body that is a YAML list', CONFIG_MAP, '- a\n- b\n', 'fieldManager=ci', 400, 'error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}'],
    ['a body that is not YAML', CONFIG_MAP, 'data: [unclosed', 'fieldManager=ci', 400, /^error decoding YAML: /],
    ['another kind', CONFIG_MAP, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'settings' } }, 'fieldManager=ci', 400, 'invalid object type: /v1, Kind=Secret'],
    ['no apiVersion or kind', CONFIG_MAP, { metadata: { name: 'settings' } }, 'fieldManager=ci', 400, 'invalid object type: /, Kind='],
    ['managed fields in the configuration', CONFIG_MAP, configMap({}, { managedFields: [] }), 'fieldManager=ci', 400, 'metadata.managedFields must be nil'],
    ['another name', CONFIG_MAP, configMap({}, { name: 'other' }), 'fieldManager=ci', 400, 'the name of the object (other) does not match the name on the URL (settings)'],
    ['another namespace', CONFIG_MAP, configMap({}, { namespace: 'elsewhere' }), 'fieldManager=ci', 400, 'the namespace of the provided object does not match the namespace sent on the request'],
    [
      'two list items with one key',
      DEPLOYMENT,
      deployment({ template: { spec: { containers: [{ name: 'app' }, { name: 'app' }] } } }),
      'fieldManager=ci',
      500,
      'failed to create typed patch object (/web; apps/v1, Kind=Deployment): .spec.template.spec.containers: duplicate entries for key [name="app"]',
    ],
    ['a status write to a missing object', `${CONFIG_MAP.replace('configmaps/settings', 'pods/missing')}/status`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'missing' } }, 'fieldManager=ci', 404, 'pods "missing" not found'],
  ];

  it.each(cases)('refuses %s', async (_case, path, body, query, code, message) => {
    const reply = await apply(path, body, query);
    expect([reply.status, reply.json.code]).toEqual([code, code]);
    expect(reply.json.message).toMatch(message);
    expect(server.store.get(configMaps, 'default', 'settings')).toBeUndefined();
  });

  it('answers a stale resourceVersion in the configuration with 409 Conflict (a precondition, as in any write)', async () => {
    const created = await apply(CONFIG_MAP, configMap({ a: '1' }), 'fieldManager=ci');
    await apply(CONFIG_MAP, configMap({ a: '2' }), 'fieldManager=ci');
    const stale = await apply(CONFIG_MAP, configMap({ a: '3' }, { resourceVersion: created.json.metadata.resourceVersion }), 'fieldManager=ci');
    expect([stale.status, stale.json.reason, stale.json.message]).toEqual([
      409,
      'Conflict',
      'Operation cannot be fulfilled on configmaps "settings": the object has been modified; please apply your changes to the latest version and try again',
    ]);
  });

  it('refuses force on any other patch type (422)', async () => {
    server.store.create(configMaps, { metadata: { name: 'settings', namespace: 'default' } });
    const reply = await call(server, 'PATCH', `${CONFIG_MAP}?force=true`, { body: { data: { a: '1' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect([reply.status, reply.json.reason, reply.json.message]).toEqual([422, 'Invalid', 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch']);
  });
});
