import { firstValueFrom, lastValueFrom } from 'rxjs';
import { configMaps, deployments } from '../../lib/resources/builtins';
import { StatusError } from '../../lib/base/errors';
import { apply, applyStatus } from '../../lib/writes/apply';
import { ApplyConflictError, ConflictError } from '../../lib/writes/writeErrors';
import { widgets } from '../../apiserver/src/builtinResources';
import { applyConflictStatus, startRawWriteServer, type RawWriteServer, type ReceivedWrite } from './rawServer';

/**
 * Server-side apply, the client half, against a raw server that answers as the API server's wire
 * behaviour is documented (KEP-555, apiserver `endpoints/handlers/patch.go`,
 * `managedfields/internal/conflict.go`), so that each test sees exactly what the client sent and
 * can answer what the loopback server does not (a cause with every clause `printManager` may
 * print, a request held until the client aborts). spec/e2e/writeBack.spec.ts runs apply against
 * the loopback server's own field manager.
 */

let server: RawWriteServer;
afterEach(() => server.close());

const stored = (request: ReceivedWrite): unknown => {
  const object = JSON.parse(request.body) as { metadata: object };
  return { ...object, metadata: { ...object.metadata, resourceVersion: '7', managedFields: [{ manager: request.query.get('fieldManager'), operation: 'Apply' }] } };
};

describe('apply', () => {
  it('PATCHes the object with the apply media type, the field manager and force, the body JSON with apiVersion and kind filled in, and emits what the server stored', async () => {
    server = await startRawWriteServer((request) => ({ code: 200, body: stored(request) }));
    const deployment = await lastValueFrom(
      apply(kubeConfigOf(), deployments, { metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } }, spec: { replicas: 3 } }, { fieldManager: 'example.com/scaler', force: true }),
    );
    const [request] = server.received;
    expect(request?.method).toBe('PATCH');
    expect(request?.path).toBe('/apis/apps/v1/namespaces/shop/deployments/web');
    expect(request?.headers['content-type']).toBe('application/apply-patch+yaml');
    expect(Object.fromEntries(request!.query)).toEqual({ fieldManager: 'example.com/scaler', force: 'true' });
    expect(JSON.parse(request!.body)).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } }, spec: { replicas: 3 } });
    expect(deployment.metadata.resourceVersion).toBe('7');
    expect(deployment.spec?.replicas).toBe(3);
  });

  it('sends force only when asked, and dryRun and fieldValidation when given', async () => {
    server = await startRawWriteServer((request) => ({ code: 200, body: stored(request) }));
    await lastValueFrom(apply(kubeConfigOf(), configMaps, { metadata: { name: 'c', namespace: 'shop' }, data: { a: '1' } }, { fieldManager: 'm', dryRun: true, fieldValidation: 'Strict' }));
    expect(Object.fromEntries(server.received[0]!.query)).toEqual({ fieldManager: 'm', dryRun: 'All', fieldValidation: 'Strict' });
  });

  it('reaches a custom resource by its group and plural, keeping an apiVersion the object states', async () => {
    server = await startRawWriteServer((request) => ({ code: 201, body: stored(request) }));
    await lastValueFrom(apply(kubeConfigOf(), widgets, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'shop' }, spec: { size: 2 } }, { fieldManager: 'm' }));
    expect(server.received[0]?.path).toBe('/apis/example.com/v1/namespaces/shop/widgets/w');
    expect(JSON.parse(server.received[0]!.body)).toMatchObject({ apiVersion: 'example.com/v1', kind: 'Widget' });
  });

  it('applyStatus goes through the status subresource', async () => {
    server = await startRawWriteServer((request) => ({ code: 200, body: stored(request) }));
    await lastValueFrom(
      applyStatus(kubeConfigOf(), deployments, { metadata: { name: 'web', namespace: 'shop' }, status: { observedGeneration: 2 } }, { fieldManager: 'm', force: true }),
    );
    expect(server.received[0]?.path).toBe('/apis/apps/v1/namespaces/shop/deployments/web/status');
    expect(server.received[0]?.headers['content-type']).toBe('application/apply-patch+yaml');
  });

  it('fails with an ApplyConflictError naming the manager, how it wrote, and the field, with the server message', async () => {
    server = await startRawWriteServer(() => ({ code: 409, body: applyConflictStatus([{ manager: 'conflict with "kubectl" using apps/v1', field: '.spec.replicas' }]) }));
    const error = await lastValueFrom(apply(kubeConfigOf(), deployments, { metadata: { name: 'web', namespace: 'shop' }, spec: { replicas: 5 } }, { fieldManager: 'm' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApplyConflictError);
    expect(error).toBeInstanceOf(StatusError);
    const conflict = error as ApplyConflictError;
    expect(conflict.code).toBe(409);
    expect(conflict.message).toBe('409 Conflict on PATCH /apis/apps/v1/namespaces/shop/deployments/web: Apply failed with 1 conflict: conflict with "kubectl" using apps/v1: .spec.replicas');
    expect(conflict.conflicts).toEqual([{ manager: 'kubectl', operation: 'Update', apiVersion: 'apps/v1', time: undefined, subresource: undefined, field: '.spec.replicas' }]);
    expect(conflict.managers).toEqual(['kubectl']);
  });

  it('reads every conflict of several managers: appliers, updaters with a time, a subresource', async () => {
    server = await startRawWriteServer(() => ({
      code: 409,
      body: applyConflictStatus([
        { manager: 'conflict with "other-controller"', field: '.spec.template.spec.containers[name="app"].image' },
        { manager: 'conflict with "kube-controller-manager" with subresource "scale" using apps/v1 at 2024-05-01T10:00:00Z', field: '.spec.replicas' },
        { manager: 'conflict with "other-controller"', field: '.metadata.labels.tier' },
      ]),
    }));
    const error = (await lastValueFrom(apply(kubeConfigOf(), deployments, { metadata: { name: 'web', namespace: 'shop' } }, { fieldManager: 'm' })).catch((e: unknown) => e)) as ApplyConflictError;
    expect(error.conflicts).toEqual([
      { manager: 'other-controller', operation: 'Apply', apiVersion: undefined, time: undefined, subresource: undefined, field: '.spec.template.spec.containers[name="app"].image' },
      { manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'apps/v1', time: '2024-05-01T10:00:00Z', subresource: 'scale', field: '.spec.replicas' },
      { manager: 'other-controller', operation: 'Apply', apiVersion: undefined, time: undefined, subresource: undefined, field: '.metadata.labels.tier' },
    ]);
    expect(error.managers).toEqual(['other-controller', 'kube-controller-manager']);
  });

  it('fails with a ConflictError, not an apply conflict, when a resourceVersion in the object is stale', async () => {
    server = await startRawWriteServer(() => ({
      code: 409,
      body: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again',
        reason: 'Conflict',
        details: { name: 'web', group: 'apps', kind: 'deployments' },
        code: 409,
      },
    }));
    const error = await lastValueFrom(apply(kubeConfigOf(), deployments, { metadata: { name: 'web', namespace: 'shop', resourceVersion: '3' } }, { fieldManager: 'm' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).not.toBeInstanceOf(ApplyConflictError);
  });

  it('passes other refusals on as StatusErrors (a 415 from a server without server-side apply)', async () => {
    server = await startRawWriteServer(() => ({ code: 415, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'UnsupportedMediaType', message: 'no apply here', code: 415 } }));
    const error = await firstValueFrom(apply(kubeConfigOf(), configMaps, { metadata: { name: 'c', namespace: 'shop' } }, { fieldManager: 'm' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StatusError);
    expect(error).not.toBeInstanceOf(ConflictError);
    expect((error as StatusError).code).toBe(415);
  });

  it('aborts the request on unsubscription', async () => {
    server = await startRawWriteServer(() => ({ hold: true }));
    const subscription = apply(kubeConfigOf(), configMaps, { metadata: { name: 'c', namespace: 'shop' } }, { fieldManager: 'm' }).subscribe();
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (server.received.length > 0) {
          clearInterval(poll);
          resolve();
        }
      }, 5);
    });
    subscription.unsubscribe();
    await server.heldClosed;
  });

  it('refuses at once what the server refuses whatever it holds: no field manager, no name, no namespace for a namespaced kind', async () => {
    server = await startRawWriteServer((request) => ({ code: 200, body: stored(request) }));
    const kubeConfig = kubeConfigOf();
    expect(() => apply(kubeConfig, configMaps, { metadata: { name: 'c', namespace: 'shop' } }, { fieldManager: '' })).toThrow(TypeError);
    expect(() => apply(kubeConfig, configMaps, { metadata: { name: '', namespace: 'shop' } }, { fieldManager: 'm' })).toThrow(TypeError);
    expect(() => apply(kubeConfig, configMaps, { metadata: { name: 'c' } }, { fieldManager: 'm' })).toThrow(/namespaced/);
    expect(server.received).toEqual([]);
  });
});

function kubeConfigOf() {
  return server.kubeConfig;
}
