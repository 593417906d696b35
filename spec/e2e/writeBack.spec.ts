import { lastValueFrom, type Subscription } from 'rxjs';
import { configMaps, events, eventsV1, type ConfigMap } from '../../lib/resources/builtins';
import { resourcePath } from '../../lib/resources/resource';
import { apply, applyStatus } from '../../lib/writes/apply';
import { setCondition } from '../../lib/writes/conditions';
import { edit } from '../../lib/writes/edit';
import { eventRecorder } from '../../lib/writes/eventRecorder';
import { writeEdit } from '../../lib/writes/writeEdit';
import { ApplyConflictError } from '../../lib/writes/writeErrors';
import { startApiServer, widgets, type ApiServer } from '../../apiserver/src';
import { eventually } from '../support/eventually';
import { MANAGER, runWidgetController, widgetsWithStatus } from './widgetController';

/**
 * Issue 33's end-to-end case, over HTTP against the loopback server through its KubeConfig: a
 * controller applies a child ConfigMap per Widget with a field manager, sets a Ready condition on
 * the Widget's status through the status subresource, and records an Event; a second field
 * manager's conflicting apply gets a 409 naming the field; force moves the field. kubectl's view of
 * the same is spec/clients/kubectlWriteBack.spec.ts.
 */

describe('writing back against the loopback server', () => {
  let server: ApiServer;
  let controller: Subscription | undefined;
  beforeEach(async () => {
    server = await startApiServer();
  });
  afterEach(async () => {
    controller?.unsubscribe();
    await server.close();
  });

  it('applies a child with a field manager, sets Ready through the status subresource, records an Event; a second manager conflicts on the field until it forces', async () => {
    server.store.create(widgets, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'shop' }, spec: { size: 3 } });
    const recorder = eventRecorder(server.kubeConfig, { reportingController: MANAGER, reportingInstance: 'replica-1' });
    controller = runWidgetController(server.kubeConfig, recorder);

    // The child, created by apply, owned by the controller's manager.
    const child = await eventually(() => {
      const found = server.store.get(configMaps, 'shop', 'w-settings');
      expect(found?.data).toEqual({ size: '3' });
      return found!;
    });
    const entries = child.metadata.managedFields as { manager: string; operation: string; fieldsType: string; fieldsV1: Record<string, unknown> }[];
    expect(entries).toEqual([expect.objectContaining({ manager: MANAGER, operation: 'Apply', fieldsType: 'FieldsV1' })]);
    expect(entries[0]!.fieldsV1).toMatchObject({ 'f:data': { 'f:size': {} } });

    // Ready on the status, written through the subresource; the spec untouched by it.
    await eventually(() => {
      const widget = server.store.get(widgetsWithStatus, 'shop', 'w');
      expect(widget?.status?.conditions).toEqual([expect.objectContaining({ type: 'Ready', status: 'True', reason: 'SettingsApplied', observedGeneration: widget?.metadata.generation })]);
      expect(widget?.spec).toEqual({ size: 3 });
    });
    expect(server.requests.entries.some((entry) => entry.method === 'PATCH' && entry.path === `${resourcePath(widgets, { namespace: 'shop', name: 'w' })}/status`)).toBe(true);

    // The Event, served by events.k8s.io/v1 and, as the same object, by core/v1.
    const [event] = await eventually(() => {
      const found = server.store.list(eventsV1, 'shop');
      expect(found).toHaveLength(1);
      return found;
    });
    expect(event).toMatchObject({ reason: 'SettingsApplied', action: 'Apply', reportingController: MANAGER, regarding: { kind: 'Widget', name: 'w' } });
    expect(server.store.get(events, 'shop', event!.metadata.name)).toMatchObject({ reason: 'SettingsApplied', involvedObject: { kind: 'Widget', name: 'w' } });

    // A second manager's apply of the same field with another value: a 409 naming the owner and the field.
    const conflict = await lastValueFrom(apply(server.kubeConfig, configMaps, { metadata: { name: 'w-settings', namespace: 'shop' }, data: { size: '99' } }, { fieldManager: 'other-team' })).catch(
      (error: unknown) => error,
    );
    expect(conflict).toBeInstanceOf(ApplyConflictError);
    expect((conflict as ApplyConflictError).code).toBe(409);
    expect((conflict as ApplyConflictError).conflicts).toEqual([expect.objectContaining({ manager: MANAGER, operation: 'Apply', field: '.data.size' })]);
    expect(server.store.get(configMaps, 'shop', 'w-settings')?.data).toEqual({ size: '3' });

    // Forced, the field moves to the second manager.
    const forced: ConfigMap = await lastValueFrom(apply(server.kubeConfig, configMaps, { metadata: { name: 'w-settings', namespace: 'shop' }, data: { size: '99' } }, { fieldManager: 'other-team', force: true }));
    expect(forced.data).toEqual({ size: '99' });
    const owners = (forced.metadata.managedFields as { manager: string; fieldsV1?: Record<string, unknown> }[]).map((entry) => [entry.manager, JSON.stringify(entry.fieldsV1 ?? {}).includes('f:size')]);
    expect(owners).toEqual(expect.arrayContaining([['other-team', true]]));
    expect(owners.filter(([manager, ownsSize]) => manager === MANAGER && ownsSize)).toEqual([]);
  });

  it('creates on apply to a missing name, and applyStatus owns status fields per manager', async () => {
    server.store.create(widgets, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'v', namespace: 'shop' }, spec: { size: 1 } });
    const created = await lastValueFrom(apply(server.kubeConfig, configMaps, { metadata: { name: 'fresh', namespace: 'shop' }, data: { a: '1' } }, { fieldManager: 'm1' }));
    expect(created.metadata.resourceVersion).toBeDefined();
    const conditions = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'Starting' }, { now: new Date('2026-01-01T00:00:00Z') });
    await lastValueFrom(applyStatus(server.kubeConfig, widgetsWithStatus, { metadata: { name: 'v', namespace: 'shop' }, status: { conditions } }, { fieldManager: 'm1' }));
    const conflict = await lastValueFrom(
      applyStatus(server.kubeConfig, widgetsWithStatus, { metadata: { name: 'v', namespace: 'shop' }, status: { conditions: setCondition(conditions, { type: 'Ready', status: 'True', reason: 'Up' }) } }, { fieldManager: 'm2' }),
    ).catch((error: unknown) => error);
    expect(conflict).toBeInstanceOf(ApplyConflictError);
    // Widget's CRD has no list markers, so conditions is an atomic list as in the API server: the
    // conflict is on the whole list, and names m1 with the subresource it applied through.
    expect((conflict as ApplyConflictError).conflicts).toEqual([{ manager: 'm1', operation: 'Apply', apiVersion: undefined, time: undefined, subresource: 'status', field: '.status.conditions' }]);
  });

  it('keeps spec and status apart: the object endpoint ignores status, the status endpoint ignores the rest', async () => {
    server.store.create(widgets, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'u', namespace: 'shop' }, spec: { size: 1 } });
    const widget = server.store.get(widgetsWithStatus, 'shop', 'u')!;
    const both = edit(
      widget,
      (draft) => {
        draft.spec = { size: 2 };
        draft.status = { observedGeneration: 7 };
      },
      { statusSubresource: false },
    );
    expect(both.writes.map((write) => write.subresource)).toEqual([undefined]);
    await lastValueFrom(writeEdit(server.kubeConfig, widgetsWithStatus, both));
    expect(server.store.get(widgetsWithStatus, 'shop', 'u')).toMatchObject({ spec: { size: 2 } });
    expect(server.store.get(widgetsWithStatus, 'shop', 'u')?.status).toBeUndefined();

    // An applier sending the whole object to /status changes the status alone.
    const reported = await lastValueFrom(applyStatus(server.kubeConfig, widgetsWithStatus, { metadata: { name: 'u', namespace: 'shop' }, spec: { size: 5 }, status: { observedGeneration: 2 } }, { fieldManager: 'reporter' }));
    expect([reported.spec, reported.status]).toEqual([{ size: 2 }, { observedGeneration: 2 }]);
    expect(server.store.get(widgetsWithStatus, 'shop', 'u')).toMatchObject({ spec: { size: 2 }, status: { observedGeneration: 2 } });
  });
});
