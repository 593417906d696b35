import { map, mergeMap, Subject, throwError, timer, VirtualTimeScheduler } from 'rxjs';
import { Counter, Registry } from 'prom-client';
import type { InformerMetricEvent } from '../../lib/informer/informerMetrics';
import { MetricConflictError, registerInformerMetrics, registerWorkqueueMetrics } from '../../lib/prometheus/index';
import { reconcile } from '../../lib/workqueue/reconcile';
import { runTo } from '../support/virtualClock';

/** The value of each series of `metric` in `registry`, as `{labels} value` lines (histograms: their _count and _sum). */
async function series(registry: Registry, metric: string): Promise<string[]> {
  const found = registry.getSingleMetric(metric);
  if (found === undefined) return [];
  const { values } = await found.get();
  return values
    .filter((value) => !('le' in value.labels))
    .map((value) => {
      const suffix = (value as { metricName?: string }).metricName?.slice(metric.length) ?? '';
      const labels = Object.entries(value.labels)
        .map(([key, label]) => `${key}=${String(label)}`)
        .join(',');
      return `${suffix}{${labels}} ${value.value}`;
    });
}

describe('rx-informer/prometheus', () => {
  describe('registerInformerMetrics', () => {
    it("records lists, watches, relists by cause and events by type under client-go's names", async () => {
      const registry = new Registry();
      const events = new Subject<InformerMetricEvent>();
      const recording = registerInformerMetrics(registry, { name: 'pods', metrics$: events });
      for (const event of [
        { type: 'listStarted', streaming: false, relist: undefined },
        { type: 'listEnded', streaming: false, outcome: 'completed', seconds: 0.2, items: 3 },
        { type: 'watchStarted', continued: false },
        { type: 'watchEvent', eventType: 'ADDED', resourceVersion: '11' },
        { type: 'watchEvent', eventType: 'MODIFIED', resourceVersion: '12' },
        { type: 'watchEvent', eventType: 'BOOKMARK', resourceVersion: '1234567890123456789' },
        { type: 'watchEnded', outcome: 'failed', seconds: 30, events: 3, short: false },
        { type: 'listStarted', streaming: false, relist: 'expired' },
        { type: 'listEnded', streaming: false, outcome: 'failed', seconds: 1, items: 0 },
        { type: 'listStarted', streaming: false, relist: 'tooLargeResourceVersion' },
        { type: 'listEnded', streaming: false, outcome: 'completed', seconds: 0.4, items: 2 },
        { type: 'watchStarted', continued: false },
        { type: 'watchEnded', outcome: 'failed', seconds: 0, events: 0, short: true },
        { type: 'watchStarted', continued: false },
        { type: 'watchEvent', eventType: 'DELETED', resourceVersion: 'opaque-version' },
        { type: 'watchEnded', outcome: 'stopped', seconds: 5, events: 1, short: false },
      ] satisfies InformerMetricEvent[]) {
        events.next(event);
      }
      expect(await series(registry, 'reflector_lists_total')).toEqual(['{name=pods} 3']);
      expect(await series(registry, 'reflector_list_duration_seconds')).toEqual(['_sum{name=pods} 0.6000000000000001', '_count{name=pods} 2']);
      expect(await series(registry, 'reflector_items_per_list')).toEqual(['_sum{name=pods} 5', '_count{name=pods} 2']);
      expect(await series(registry, 'reflector_watches_total')).toEqual(['{name=pods} 3']);
      expect(await series(registry, 'reflector_short_watches_total')).toEqual(['{name=pods} 1']);
      // The watch ended by unsubscription is left out of the durations.
      expect(await series(registry, 'reflector_watch_duration_seconds')).toEqual(['_sum{name=pods} 30', '_count{name=pods} 2']);
      expect(await series(registry, 'reflector_items_per_watch')).toEqual(['_sum{name=pods} 3', '_count{name=pods} 2']);
      // The last decimal version's 15 least significant digits; an opaque one leaves it as it was.
      expect(await series(registry, 'reflector_last_resource_version')).toEqual(['{name=pods} 567890123456789']);
      expect(await series(registry, 'rx_informer_relists_total')).toEqual(['{name=pods,cause=expired} 1', '{name=pods,cause=tooLargeResourceVersion} 1', '{name=pods,cause=error} 0']);
      expect(await series(registry, 'rx_informer_watch_events_total')).toEqual([
        '{name=pods,type=ADDED} 1',
        '{name=pods,type=MODIFIED} 1',
        '{name=pods,type=DELETED} 1',
        '{name=pods,type=BOOKMARK} 1',
      ]);
      recording.unsubscribe();
      expect(events.observed).toBe(false);
      expect(await series(registry, 'reflector_lists_total')).toEqual([]);
      expect(await series(registry, 'rx_informer_watch_events_total')).toEqual([]);
    });

    it('shares the metrics between informers on one registry, each under its own name', async () => {
      const registry = new Registry();
      const pods = new Subject<InformerMetricEvent>();
      const nodes = new Subject<InformerMetricEvent>();
      registerInformerMetrics(registry, { name: 'pods', metrics$: pods });
      const nodeRecording = registerInformerMetrics(registry, { name: 'ignored', metrics$: nodes }, { name: 'nodes' });
      pods.next({ type: 'listStarted', streaming: true, relist: undefined });
      expect(await series(registry, 'reflector_lists_total')).toEqual(['{name=pods} 1', '{name=nodes} 0']);
      nodeRecording.unsubscribe();
      expect(await series(registry, 'reflector_lists_total')).toEqual(['{name=pods} 1']);
    });

    it('refuses a registry where one of its names is taken by another kind of metric, with a typed error', () => {
      const registry = new Registry();
      new Counter({ name: 'reflector_last_resource_version', help: 'not ours', registers: [registry] });
      expect(() => registerInformerMetrics(registry, { name: 'pods', metrics$: new Subject() })).toThrow(MetricConflictError);
      const labelled = new Registry();
      new Counter({ name: 'reflector_lists_total', help: 'not ours', labelNames: ['informer'], registers: [labelled] });
      expect(() => registerInformerMetrics(labelled, { name: 'pods', metrics$: new Subject() })).toThrow(
        'cannot register reflector_lists_total: the registry has it with labels [informer], not [name]',
      );
    });
  });

  describe('registerWorkqueueMetrics', () => {
    it("records a reconcile queue under client-go's work queue names, the running work's age read at scrape time", async () => {
      const scheduler = new VirtualTimeScheduler();
      const registry = new Registry();
      const metrics = registerWorkqueueMetrics(registry, { name: 'deployments', now: () => scheduler.now() });
      const keys = new Subject<string>();
      // a fails after 100 ms, then succeeds after 50 ms; b takes 2 s.
      let aCalls = 0;
      const work = (key: string) =>
        key === 'a' && ++aCalls === 1
          ? timer(100, scheduler).pipe(mergeMap(() => throwError(() => new Error('boom'))))
          : timer(key === 'a' ? 50 : 2000, scheduler).pipe(map(() => undefined));
      const subscription = keys.pipe(reconcile(work, { scheduler, concurrency: 2, rateLimit: { baseDelay: 10 }, metrics })).subscribe();
      const advanceTo = (ms: number): void => runTo(scheduler, ms);
      keys.next('a');
      keys.next('b');
      keys.next('a');
      advanceTo(60);
      // The second a arrived while a ran: an add, and a key in the depth, as client-go counts it
      // (TestMetrics), queued for when a is done.
      expect(await series(registry, 'workqueue_adds_total')).toEqual(['{name=deployments} 3']);
      expect(await series(registry, 'workqueue_depth')).toEqual(['{name=deployments} 1']);
      expect(await series(registry, 'workqueue_unfinished_work_seconds')).toEqual(['{name=deployments} 0.12']);
      expect(await series(registry, 'workqueue_longest_running_processor_seconds')).toEqual(['{name=deployments} 0.06']);
      advanceTo(1000);
      // At 100 a failed (a retry) and, changed meanwhile, ran again at once until 150; the retry's
      // add at 110 found it running, so it ran a third time, 150-200. b still runs. Each wait counts
      // from the add that made a dirty: 0 (a), 0 (b), 0.1 (0 to 100) and 0.04 (110 to 150).
      expect(await series(registry, 'workqueue_retries_total')).toEqual(['{name=deployments} 1']);
      expect(await series(registry, 'workqueue_adds_total')).toEqual(['{name=deployments} 4']);
      expect(await series(registry, 'workqueue_queue_duration_seconds')).toEqual([`_sum{name=deployments} ${0.1 + 0.04}`, '_count{name=deployments} 4']);
      expect(await series(registry, 'workqueue_work_duration_seconds')).toEqual([`_sum{name=deployments} ${0.1 + 0.05 + 0.05}`, '_count{name=deployments} 3']);
      expect(await series(registry, 'workqueue_unfinished_work_seconds')).toEqual(['{name=deployments} 1']);
      expect(await series(registry, 'workqueue_longest_running_processor_seconds')).toEqual(['{name=deployments} 1']);
      advanceTo(3000);
      expect(await series(registry, 'workqueue_unfinished_work_seconds')).toEqual(['{name=deployments} 0']);
      expect(await series(registry, 'workqueue_work_duration_seconds')).toEqual([`_sum{name=deployments} ${0.1 + 0.05 + 0.05 + 2}`, '_count{name=deployments} 4']);
      subscription.unsubscribe();
      metrics.unregister();
      expect(await series(registry, 'workqueue_depth')).toEqual([]);
      expect(await series(registry, 'workqueue_unfinished_work_seconds')).toEqual([]);
    });
  });
});
