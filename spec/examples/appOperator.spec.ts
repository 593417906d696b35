import { silentLogger } from '../../lib/base/logger';
import { configMaps, eventsV1, services } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { addressOf, apps, configName, FIELD_MANAGER, main, memoryRegistry, REGISTRY_FINALIZER, type App, type Registry } from '../../examples/appOperator';
import { eventually } from '../support/eventually';
import { Lines } from './lines';
import { describeEachServerVersion } from '../support/serverVersions';

const NS = 'shop';

const app = (name: string, spec: App['spec'], finalizers?: string[]): App => ({
  apiVersion: 'example.com/v1',
  kind: 'App',
  metadata: { namespace: NS, name, ...(finalizers === undefined ? {} : { finalizers }) },
  spec,
});

describeEachServerVersion('example: an App operator over a custom resource, against the loopback API server', (serverVersion) => {
  let server: ApiServer;
  let lines: Lines;
  let stop: AbortController;
  let running: Promise<void> | undefined;
  /** Each registry call, with the App's finalizers on the server at that moment. */
  let registryCalls: { readonly call: 'register' | 'unregister'; readonly key: string; readonly finalizers: readonly string[] | undefined }[];
  /** Unregistrations still to fail. */
  let failingUnregisters: number;
  let registry: ReturnType<typeof memoryRegistry>;

  const recording = (inner: Registry): Registry => ({
    register: async (key, address, signal) => {
      registryCalls.push({ call: 'register', key, finalizers: server.store.get(apps, NS, key.split('/')[1]!)?.metadata.finalizers });
      await inner.register(key, address, signal);
    },
    unregister: async (key, signal) => {
      registryCalls.push({ call: 'unregister', key, finalizers: server.store.get(apps, NS, key.split('/')[1]!)?.metadata.finalizers });
      if (failingUnregisters > 0) {
        failingUnregisters -= 1;
        throw new Error('registry unavailable');
      }
      await inner.unregister(key, signal);
    },
  });

  const start = async (): Promise<void> => {
    running = main(server.kubeConfig, { namespace: NS, signal: stop.signal, log: lines.log, logger: silentLogger, registry: recording(registry) });
    await lines.waitFor('caches synced');
  };

  beforeEach(async () => {
    server = await startApiServer({ serverVersion, resources: [apps] });
    lines = new Lines();
    stop = new AbortController();
    running = undefined;
    registryCalls = [];
    failingUnregisters = 0;
    registry = memoryRegistry(lines.log);
  });
  afterEach(async () => {
    stop.abort();
    if (running !== undefined) await lines.settled(running.catch(() => undefined), 'main() to settle once aborted');
    await server.close();
  });

  it('keeps a ConfigMap and a Service owned by each App, and registers it once its finalizer is on', async () => {
    const web = server.store.create(apps, app('web', { port: 8080, config: { mode: 'fast' } }));
    await start();
    await lines.waitFor(`registered ${NS}/web at web.${NS}.svc:8080`);

    const owner = { apiVersion: 'example.com/v1', kind: 'App', name: 'web', uid: web.metadata.uid, controller: true, blockOwnerDeletion: true };
    const config = server.store.get(configMaps, NS, configName('web'));
    expect(config).toMatchObject({ data: { mode: 'fast' }, metadata: { ownerReferences: [owner] } });
    const service = server.store.get(services, NS, 'web');
    expect(service).toMatchObject({ spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 8080, targetPort: 8080 }] }, metadata: { ownerReferences: [owner] } });
    expect(server.store.get(apps, NS, 'web')?.metadata.finalizers).toEqual([REGISTRY_FINALIZER]);
    // The finalizer was on the App before it was registered: a deletion cannot skip the cleanup.
    // (Each reconcile registers; the children's own events reconcile the App again.)
    expect(registryCalls.length).toBeGreaterThan(0);
    expect(registryCalls).toEqual(registryCalls.map(() => ({ call: 'register', key: `${NS}/web`, finalizers: [REGISTRY_FINALIZER] })));
    expect(lines.seen.filter((line) => line.startsWith('created '))).toEqual([`created ConfigMap ${NS}/web-config`, `created Service ${NS}/web`]);
  });

  it('reports the App Ready at its generation through its status subresource, under its field manager, and records a Registered Event', async () => {
    server.store.create(apps, app('web', { port: 8080 }));
    await start();
    const ready = await eventually(() => {
      const stored = server.store.get(apps, NS, 'web');
      const conditions = stored?.status?.conditions ?? [];
      expect(conditions).toEqual([expect.objectContaining({ type: 'Ready', status: 'True', reason: 'Registered', observedGeneration: stored?.metadata.generation })]);
      return stored!;
    });
    expect(ready.spec).toEqual({ port: 8080 });
    expect(ready.metadata.managedFields).toContainEqual(expect.objectContaining({ manager: FIELD_MANAGER, operation: 'Apply', subresource: 'status' }));
    const [event] = await eventually(() => {
      const found = server.store.list(eventsV1, NS);
      expect(found).toHaveLength(1);
      return found;
    });
    expect(event).toMatchObject({ type: 'Normal', reason: 'Registered', action: 'Register', reportingController: FIELD_MANAGER, regarding: { kind: 'App', name: 'web' } });

    // A spec change: Ready again, now at the new generation. Made on the App as stored now, not on
    // `ready`, read before the waits: the update is conditional on its resourceVersion, and a
    // controller may write its primary meanwhile.
    const current = server.store.get(apps, NS, 'web')!;
    server.store.update(apps, { ...current, spec: { port: 9090 } });
    await eventually(() => {
      const stored = server.store.get(apps, NS, 'web');
      expect(stored?.metadata.generation).toBeGreaterThan(ready.metadata.generation!);
      expect(stored?.status?.conditions).toEqual([expect.objectContaining({ type: 'Ready', status: 'True', observedGeneration: stored?.metadata.generation, message: `registered at web.${NS}.svc:9090` })]);
    });
  });

  it("follows the App's spec: config keys added and removed, a new port registered at its new address", async () => {
    server.store.create(apps, app('web', { port: 8080, config: { mode: 'fast', debug: 'on' } }));
    await start();
    await lines.waitFor(`registered ${NS}/web at web.${NS}.svc:8080`);

    const mark = lines.mark();
    const current = server.store.get(apps, NS, 'web')!;
    server.store.update(apps, { ...current, spec: { port: 9090, config: { mode: 'safe' } } });
    await lines.waitFor(`registered ${NS}/web at web.${NS}.svc:9090`, mark);
    expect(lines.seen.slice(mark)).toEqual([`updated ConfigMap ${NS}/web-config`, `updated Service ${NS}/web`, `registered ${NS}/web at web.${NS}.svc:9090`]);
    expect(server.store.get(configMaps, NS, configName('web'))?.data).toEqual({ mode: 'safe' });
    expect(server.store.get(services, NS, 'web')?.spec?.ports).toEqual([{ name: 'http', port: 9090, targetPort: 9090 }]);
  });

  it('puts back a child someone else edited or deleted', async () => {
    server.store.create(apps, app('web', { port: 8080, config: { mode: 'fast' } }));
    await start();
    await lines.waitFor(`registered ${NS}/web at web.${NS}.svc:8080`);

    let mark = lines.mark();
    const edited = server.store.get(configMaps, NS, configName('web'))!;
    server.store.update(configMaps, { ...edited, data: { mode: 'hand-edited', note: 'mine' } });
    await lines.waitFor(`updated ConfigMap ${NS}/web-config`, mark);
    expect(server.store.get(configMaps, NS, configName('web'))?.data).toEqual({ mode: 'fast' });

    mark = lines.mark();
    server.store.delete(services, NS, 'web');
    await lines.waitFor(`created Service ${NS}/web`, mark);
    expect(server.store.get(services, NS, 'web')?.spec?.selector).toEqual({ app: 'web' });
  });

  it('on deletion unregisters the App, retrying a failure, and only then lets it go', async () => {
    server.store.create(apps, app('web', { port: 8080 }));
    server.store.create(apps, app('api', { port: 7070 }));
    await start();
    await lines.waitFor(`registered ${NS}/web at web.${NS}.svc:8080`);
    await lines.waitFor(`registered ${NS}/api at api.${NS}.svc:7070`);

    failingUnregisters = 1;
    const mark = lines.mark();
    server.store.delete(apps, NS, 'web');
    await lines.waitFor(`reconcile ${NS}/web failed: registry unavailable`, mark);
    // The failed cleanup keeps the finalizer: the App stays, marked for deletion.
    expect(server.store.get(apps, NS, 'web')?.metadata).toMatchObject({ finalizers: [REGISTRY_FINALIZER], deletionTimestamp: expect.any(String) });

    await lines.waitFor(`unregistered ${NS}/web`, mark);
    await eventually(() => expect(server.store.get(apps, NS, 'web')).toBeUndefined());
    expect(registryCalls.filter((call) => call.key === `${NS}/web` && call.call === 'unregister')).toHaveLength(2);
    expect([...registry.entries.keys()]).toEqual([`${NS}/api`]);
    expect(server.store.get(apps, NS, 'api')?.metadata.finalizers).toEqual([REGISTRY_FINALIZER]);
  });

  it('cleans up an App deleted while the operator was down, and makes it no children', async () => {
    const old = server.store.create(apps, app('old', { port: 8080 }, [REGISTRY_FINALIZER]));
    await registry.register(`${NS}/old`, addressOf(old), new AbortController().signal);
    server.store.delete(apps, NS, 'old');
    expect(server.store.get(apps, NS, 'old')?.metadata.deletionTimestamp).toEqual(expect.any(String));

    const mark = lines.mark();
    await start();
    await lines.waitFor(`unregistered ${NS}/old`, mark);
    await eventually(() => expect(server.store.get(apps, NS, 'old')).toBeUndefined());
    expect(registryCalls.map((call) => call.call)).toEqual(['unregister']);
    expect(server.store.get(configMaps, NS, configName('old'))).toBeUndefined();
    expect(server.store.get(services, NS, 'old')).toBeUndefined();
  });

  it('resolves once stopped', async () => {
    await start();
    stop.abort();
    await expect(lines.settled(running!, 'main() to resolve once stopped')).resolves.toBeUndefined();
    expect(lines.seen).toEqual(['caches synced', 'stopped']);
  });
});
