import { lastValueFrom, type Subscription } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import { informer } from '../../lib/informer/informer';
import { configMaps } from '../../lib/resources/builtins';
import { defineResource } from '../../lib/resources/resource';
import type { KubeObject } from '../../lib/base/object';
import { silentLogger } from '../../lib/base/logger';
import type { Snapshot } from '../../lib/store/snapshot';
import { changedKeys } from '../../lib/workqueue/changedKeys';
import { reconcile } from '../../lib/workqueue/reconcile';
import { apply } from '../../lib/writes/apply';
import { setCondition, type Condition } from '../../lib/writes/conditions';
import { edit } from '../../lib/writes/edit';
import type { EventRecorder } from '../../lib/writes/eventRecorder';
import { writeEdit } from '../../lib/writes/writeEdit';
import { widgets } from '../../apiserver/src';

/**
 * The controller of issue 33's end-to-end case, shared by spec/e2e/writeBack.spec.ts and
 * kubectl's view of it (spec/clients/kubectlWriteBack.spec.ts): per Widget, a child ConfigMap
 * applied with a field manager, Ready on the Widget's status, and an Event.
 */

/** The loopback server's Widget, with a status. */
export interface WidgetWithStatus extends KubeObject {
  readonly spec?: { readonly size?: number; readonly color?: string };
  readonly status?: { readonly conditions?: readonly Condition[]; readonly observedGeneration?: number };
}
/** `widgets`, typed with a status. */
export const widgetsWithStatus = defineResource<WidgetWithStatus>({ group: widgets.group, version: widgets.version, plural: widgets.plural, kind: widgets.kind, namespaced: true });

/** The controller's field manager and reporting controller. */
export const MANAGER = 'example.com/widget-controller';

/** The controller: a child ConfigMap per Widget, applied; Ready on the Widget's status; an Event. */
export function runWidgetController(kubeConfig: KubeConfig, recorder: EventRecorder): Subscription {
  // The informer's watch outlives the unsubscription by its grace period, and the specs close the server within it: that reset is retried, not what they check.
  const widgetInformer = informer(kubeConfig, widgetsWithStatus, { logger: silentLogger });
  let latest: Snapshot<WidgetWithStatus> | undefined;
  const running = widgetInformer.informer$.subscribe((snapshot) => (latest = snapshot));
  running.add(recorder.writes$.subscribe());
  running.add(
    widgetInformer.informer$
      .pipe(
        changedKeys(),
        reconcile(async (key) => {
          const widget = latest?.get(key);
          if (widget === undefined) return;
          const { name, namespace, uid, generation } = widget.metadata;
          await lastValueFrom(
            apply(
              kubeConfig,
              configMaps,
              {
                metadata: { name: `${name}-settings`, namespace, ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Widget', name, uid: uid!, controller: true }] },
                data: { size: String(widget.spec?.size ?? 0) },
              },
              { fieldManager: MANAGER, force: true },
            ),
          );
          const ready = edit(widget, (draft) => {
            draft.status ??= {};
            draft.status.conditions = setCondition(draft.status.conditions, { type: 'Ready', status: 'True', reason: 'SettingsApplied', observedGeneration: generation });
            draft.status.observedGeneration = generation;
          });
          if (ready.writes.length > 0) {
            await lastValueFrom(writeEdit(kubeConfig, widgetsWithStatus, ready, { fieldManager: MANAGER }));
            recorder.record(widget, { type: 'Normal', reason: 'SettingsApplied', action: 'Apply', note: `settings applied for size ${widget.spec?.size ?? 0}` });
          }
        }),
      )
      .subscribe(),
  );
  return running;
}

