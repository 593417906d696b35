import type { Subscription } from 'rxjs';
import { silentLogger } from '../../lib/base/logger';
import { controller, type ControllerEvent } from '../../lib/controller/controller';
import { changedGeneration } from '../../lib/operators/changedGeneration';
import { configMaps, services } from '../../lib/resources/builtins';
import type { Condition } from '../../lib/writes/conditions';
import { appReconciler, apps, memoryRegistry, type App, type ConditionsWriter } from '../../examples/appOperator';
import { Cluster } from '../controller/controllerHarness';

/**
 * The App operator's reconcile in virtual time, over the controller harness: its status write is
 * one of its own writes, which the next reconcile of the App reads back. The App watch is 100 ms
 * late and a write takes 10 ms; the conditions are written straight into the store.
 *
 * Synced at 100, the first reconcile adds the finalizer (answered at 110), creates the ConfigMap
 * (120) and the Service (130), and writes the conditions at 130. The ConfigMap's event (215) and
 * the Service's (225) reconcile the App again, before its status reaches the cache (230): that
 * reconcile must wait for it, or it finds the App not Ready and writes Ready once more, with a new
 * lastTransitionTime although the status never changed.
 */

const NS = 'shop';
let cluster: Cluster;
let running: Subscription | undefined;
let events: ControllerEvent[];
/** Each write of the conditions: the generation its Ready condition observed. */
let conditionWrites: (number | undefined)[];

/** Writes the conditions into the store at once, as a status write; resolves with the App stored. */
const storeConditions: ConditionsWriter = async (app, conditions) => {
  conditionWrites.push(conditions.find((condition: Condition) => condition.type === 'Ready')?.observedGeneration);
  const current = cluster.store.get(apps, NS, app.metadata.name)!;
  return cluster.store.update(apps, { ...current, status: { conditions } });
};

beforeEach(() => {
  cluster = new Cluster();
  cluster.watchLatency = 100;
  cluster.writeLatency = 10;
  events = [];
  conditionWrites = [];
  running = controller({ factory: cluster.factory, client: cluster.client }, apps, { predicates: [changedGeneration()] })
    .owns(configMaps)
    .owns(services)
    .run(appReconciler(memoryRegistry(), () => undefined, storeConditions), { scheduler: cluster.time, logger: silentLogger })
    .subscribe((event) => events.push(event));
});
afterEach(() => running?.unsubscribe());

const webApp = (): App => ({ apiVersion: 'example.com/v1', kind: 'App', metadata: { namespace: NS, name: 'web' }, spec: { port: 8080 } });

describe('example: the App operator reads back its own status write', () => {
  it('writes Ready once per generation: the reconciles its children start wait for the cache to show it', async () => {
    cluster.store.create(apps, webApp());
    await cluster.runTo(1_000);
    expect(conditionWrites).toEqual([1]);
    const ready = cluster.store.get(apps, NS, 'web')!;
    expect(ready.status?.conditions).toEqual([expect.objectContaining({ type: 'Ready', status: 'True', observedGeneration: 1 })]);

    // A spec change: Ready once more, at generation 2, and nothing after the Service's event.
    cluster.store.update(apps, { ...ready, spec: { port: 9090 } });
    await cluster.runTo(2_000);
    expect(conditionWrites).toEqual([1, 2]);
    expect(events.filter((event) => event.type === 'failed' || event.type === 'staleCache')).toEqual([]);
  });
});
