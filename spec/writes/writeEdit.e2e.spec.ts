import { lastValueFrom, type Subscription } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import { informer } from '../../lib/informer/informer';
import { pods, type Pod } from '../../lib/resources/builtins';
import type { Snapshot } from '../../lib/store/snapshot';
import { changedKeys } from '../../lib/workqueue/changedKeys';
import { reconcile, type ReconcileEvent } from '../../lib/workqueue/reconcile';
import { StatusError } from '../../lib/base/errors';
import { silentLogger } from '../../lib/base/logger';
import { edit } from '../../lib/writes/edit';
import { writeEdit } from '../../lib/writes/writeEdit';
import { ConflictError } from '../../lib/writes/writeErrors';
import { loadClientNode, startApiServer, widgets, type ApiServer, type Widget } from '../../apiserver/src';
import { eventually } from '../support/eventually';

/**
 * Edits written back over HTTP to the loopback API server, which applies JSON Patch and merge
 * patches as the API server does (and answers a JSON Patch whose test fails with 422, a stale
 * resourceVersion in a merge patch with 409): through our transport, and as the values handed to
 * client-node 2.x's typed clients.
 */

let server: ApiServer;
let running: Subscription[];
beforeEach(async () => {
  server = await startApiServer();
  running = [];
  server.store.create(pods, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-1', namespace: 'shop', labels: { app: 'web' } },
    spec: { containers: [{ name: 'app', image: 'app:1' }] },
    status: { phase: 'Pending' },
  } as Pod);
  server.store.create(widgets, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'shop' }, spec: { size: 1, color: 'red' } });
});
afterEach(async () => {
  running.forEach((subscription) => subscription.unsubscribe());
  await server.close();
});

const storedPod = (): Pod => server.store.get(pods, 'shop', 'web-1')!;
const patches = () => server.requests.entries.filter((entry) => entry.method === 'PATCH').map((entry) => `${entry.path} ${entry.status}`);

describe('writeEdit over HTTP', () => {
  it('sends the JSON Patch and emits the object as stored', async () => {
    const cached = storedPod();
    const change = edit(cached, (draft) => {
      draft.metadata.labels!['tier'] = 'front';
      draft.spec!.containers[0]!.image = 'app:2';
    });
    const answered = await lastValueFrom(writeEdit(server.kubeConfig, pods, change, { fieldManager: 'tier-labeller' }));
    expect(storedPod().metadata.labels).toEqual({ app: 'web', tier: 'front' });
    expect(storedPod().spec?.containers[0]?.image).toBe('app:2');
    expect(answered.metadata.resourceVersion).toBe(storedPod().metadata.resourceVersion);
    expect(server.requests.entries.find((entry) => entry.method === 'PATCH')?.query).toEqual({ fieldManager: 'tier-labeller' });
  });

  it('writes an edit of spec and status as two PATCHes, the second through /status at the version the first left', async () => {
    const change = edit(storedPod(), (draft) => {
      draft.metadata.labels!['tier'] = 'front';
      draft.status!.phase = 'Running';
    });
    const answered = await lastValueFrom(writeEdit(server.kubeConfig, pods, change));
    expect(patches()).toEqual(['/api/v1/namespaces/shop/pods/web-1 200', '/api/v1/namespaces/shop/pods/web-1/status 200']);
    expect(storedPod().metadata.labels?.['tier']).toBe('front');
    expect(storedPod().status?.phase).toBe('Running');
    expect(answered.metadata.resourceVersion).toBe(storedPod().metadata.resourceVersion);
  });

  it('writes a custom resource with a merge patch', async () => {
    const cached = server.store.get(widgets, 'shop', 'w')!;
    const change = edit(cached, (draft) => {
      draft.spec!.size = 3;
      delete draft.spec!.color;
    });
    const answered = await lastValueFrom(writeEdit(server.kubeConfig, widgets, change, { patchType: 'merge' }));
    expect(answered.spec).toEqual({ size: 3 });
    expect(server.store.get(widgets, 'shop', 'w')?.spec).toEqual({ size: 3 });
  });

  it.each(['json', 'merge'] as const)('fails a %s patch derived from a version the server has moved past with a ConflictError, writing nothing', async (patchType) => {
    const stale = storedPod();
    server.store.update(pods, { ...stale, metadata: { ...stale.metadata, labels: { app: 'web', owner: 'someone-else' } } });
    const change = edit(stale, (draft) => {
      draft.metadata.labels!['tier'] = 'front';
    });
    const error = await lastValueFrom(writeEdit(server.kubeConfig, pods, change, { patchType })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as ConflictError).code).toBe(patchType === 'json' ? 422 : 409);
    expect(storedPod().metadata.labels).toEqual({ app: 'web', owner: 'someone-else' });
  });

  it('passes a validation refusal on as a StatusError, not a conflict', async () => {
    const change = edit(storedPod(), (draft) => {
      draft.metadata.name = 'renamed';
    });
    const error = await lastValueFrom(writeEdit(server.kubeConfig, pods, change)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StatusError);
    expect(error).not.toBeInstanceOf(ConflictError);
    expect((error as StatusError).code).toBe(400);
  });

  it('emits the object without a request when the edit changed nothing', async () => {
    const cached = storedPod();
    const change = edit(cached, (draft) => {
      draft.metadata.labels!['app'] = 'web';
    });
    expect(await lastValueFrom(writeEdit(server.kubeConfig, pods, change))).toBe(cached);
    expect(patches()).toEqual([]);
  });
});

describe('a reconcile that writes from the cache', () => {
  it('loses a race to another writer, throws the ConflictError, and succeeds when the work queue retries it over the newer cached version', async () => {
    // The informer's watch outlives the unsubscription by its grace period, and the server closes within it: that reset is retried, not what this spec checks.
    const widgetInformer = informer(server.kubeConfig, widgets, { logger: silentLogger });
    let latest: Snapshot<Widget> | undefined;
    running.push(widgetInformer.informer$.subscribe((snapshot) => (latest = snapshot)));
    let attempts = 0;
    const events: ReconcileEvent[] = [];
    running.push(
      widgetInformer.informer$
        .pipe(
          changedKeys(),
          reconcile(async (key) => {
            const cached = latest?.get(key);
            if (cached === undefined || cached.metadata.labels?.['checked'] === 'true') return;
            attempts += 1;
            if (attempts === 1) {
              // Another writer changes the widget after this reconcile read it.
              const current = server.store.get(widgets, 'shop', 'w')!;
              server.store.update(widgets, { ...current, spec: { ...current.spec, color: 'blue' } });
            }
            const change = edit(cached, (draft) => {
              (draft.metadata.labels ??= {})['checked'] = 'true';
            });
            await lastValueFrom(writeEdit(server.kubeConfig, widgets, change));
          }),
        )
        .subscribe((event) => events.push(event)),
    );
    await eventually(() => expect(server.store.get(widgets, 'shop', 'w')?.metadata.labels?.['checked']).toBe('true'));
    const failed = events.filter((event) => event.type === 'failed');
    expect(failed.length).toBeGreaterThanOrEqual(1);
    expect(failed.every((event) => event.type === 'failed' && event.error instanceof ConflictError)).toBe(true);
    // Nothing the other writer did was overwritten.
    expect(server.store.get(widgets, 'shop', 'w')?.spec).toEqual({ size: 1, color: 'blue' });
  });
});

describe("with client-node 2.x's typed clients", () => {
  type ClientNode = typeof import('@kubernetes/client-node');
  const clientNode: ClientNode = loadClientNode();
  const coreOf = (kubeConfig: KubeConfig) => kubeConfig.makeApiClient(clientNode.CoreV1Api);

  it('takes the JSON Patch as the body of patchNamespacedPod, which sends JSON Patch by default', async () => {
    const change = edit(storedPod(), (draft) => {
      draft.metadata.labels!['tier'] = 'front';
    });
    const pod = await coreOf(server.kubeConfig).patchNamespacedPod({ name: 'web-1', namespace: 'shop', body: change.writes[0]!.jsonPatch });
    expect(pod.metadata?.labels?.['tier']).toBe('front');
  });

  it('answers 400 to a merge patch sent with that default, and takes it with the merge media type set through setHeaderOptions', async () => {
    const change = edit(storedPod(), (draft) => {
      draft.metadata.labels!['tier'] = 'front';
    });
    const core = coreOf(server.kubeConfig);
    const refused = await core.patchNamespacedPod({ name: 'web-1', namespace: 'shop', body: change.writes[0]!.mergePatch }).catch((e: unknown) => e);
    expect((refused as { code?: number }).code).toBe(400);
    const pod = await core.patchNamespacedPod(
      { name: 'web-1', namespace: 'shop', body: change.writes[0]!.mergePatch },
      clientNode.setHeaderOptions('Content-Type', clientNode.PatchStrategy.MergePatch),
    );
    expect(pod.metadata?.labels?.['tier']).toBe('front');
  });

  it('writes the status half through patchNamespacedPodStatus', async () => {
    const change = edit(storedPod(), (draft) => {
      draft.status!.phase = 'Running';
    });
    expect(change.writes[0]?.subresource).toBe('status');
    const pod = await coreOf(server.kubeConfig).patchNamespacedPodStatus({ name: 'web-1', namespace: 'shop', body: change.writes[0]!.jsonPatch });
    expect(pod.status?.phase).toBe('Running');
  });
});
