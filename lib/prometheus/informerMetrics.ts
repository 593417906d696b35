import type { Observable, Subscription } from 'rxjs';
import type { InformerMetricEvent, RelistCause, WatchEventType } from '../informer/informerMetrics';
import { counterIn, gaugeIn, histogramIn, type MetricsRegistry } from './registeredMetric';

/** Seconds a list takes: from 5 ms to a minute (the Prometheus defaults, extended for large lists). */
export const LIST_DURATION_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds a watch lasts: a watch ends after the server's `timeoutSeconds`, drawn from [300, 600) by default. */
export const WATCH_DURATION_BUCKETS: readonly number[] = [1, 10, 60, 120, 300, 450, 600, 900];
/** Objects per list, and events per watch: powers of ten up to a million. */
export const ITEMS_BUCKETS: readonly number[] = [0, 1, 10, 100, 1_000, 10_000, 100_000, 1_000_000];

const RELIST_CAUSES: readonly RelistCause[] = ['expired', 'tooLargeResourceVersion', 'error'];
const WATCH_EVENT_TYPES: readonly WatchEventType[] = ['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK'];

/** What {@link registerInformerMetrics} reads: an informer's name and its `metrics$`. */
export interface MeasuredInformer {
  readonly name: string;
  readonly metrics$: Observable<InformerMetricEvent>;
}

/** Options of {@link registerInformerMetrics}. */
export interface InformerMetricsOptions {
  /** The `name` label of this informer's series; one per informer and registry. Default: the informer's name. */
  readonly name?: string;
}

/** The registry's informer metrics, made on first use. */
function informerMetricsIn(registry: MetricsRegistry) {
  const byName = ['name'] as const;
  return {
    lists: counterIn(registry, { name: 'reflector_lists_total', help: 'Total number of API lists done by the reflectors', labelNames: byName }),
    listDuration: histogramIn(
      registry,
      { name: 'reflector_list_duration_seconds', help: 'How long an API list takes to return and decode for the reflectors', labelNames: byName },
      LIST_DURATION_BUCKETS,
    ),
    itemsPerList: histogramIn(registry, { name: 'reflector_items_per_list', help: 'How many items an API list returns to the reflectors', labelNames: byName }, ITEMS_BUCKETS),
    watches: counterIn(registry, { name: 'reflector_watches_total', help: 'Total number of API watches done by the reflectors', labelNames: byName }),
    shortWatches: counterIn(registry, { name: 'reflector_short_watches_total', help: 'Total number of short API watches done by the reflectors', labelNames: byName }),
    watchDuration: histogramIn(
      registry,
      { name: 'reflector_watch_duration_seconds', help: 'How long an API watch takes to return and decode for the reflectors', labelNames: byName },
      WATCH_DURATION_BUCKETS,
    ),
    itemsPerWatch: histogramIn(registry, { name: 'reflector_items_per_watch', help: 'How many items an API watch returns to the reflectors', labelNames: byName }, ITEMS_BUCKETS),
    lastResourceVersion: gaugeIn(registry, {
      name: 'reflector_last_resource_version',
      help: 'Last resource version seen for the reflectors (its 15 least significant digits; only when it is a decimal number)',
      labelNames: byName,
    }),
    relists: counterIn(registry, { name: 'rx_informer_relists_total', help: 'Lists made after the cache had synced, by the error that caused them', labelNames: ['name', 'cause'] as const }),
    watchEvents: counterIn(registry, { name: 'rx_informer_watch_events_total', help: 'Watch events that reached the cache, by type', labelNames: ['name', 'type'] as const }),
  };
}

/**
 * Exports an informer's `metrics$` to a prom-client registry, under client-go's reflector metric
 * names (the `name` label tells informers apart), plus relists by cause and watch events by type.
 *
 * | metric | type | what |
 * |---|---|---|
 * | `reflector_lists_total` | counter | lists started, paged or streaming |
 * | `reflector_list_duration_seconds` | histogram | each completed list |
 * | `reflector_items_per_list` | histogram | objects in each completed list |
 * | `reflector_watches_total` | counter | watches started |
 * | `reflector_short_watches_total` | counter | watches that closed within 1 s without an event |
 * | `reflector_watch_duration_seconds` | histogram | each watch that ended on its own (not by unsubscription) |
 * | `reflector_items_per_watch` | histogram | events in each such watch |
 * | `reflector_last_resource_version` | gauge | the last watch event's resourceVersion, when decimal |
 * | `rx_informer_relists_total` | counter | `cause`: `expired`, `tooLargeResourceVersion`, `error` |
 * | `rx_informer_watch_events_total` | counter | `type`: `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` |
 *
 * The metrics are made in the registry on first use and shared by every informer registered
 * there. Subscribing to `metrics$` does not start the informer. Cost: a counter increment per
 * watch event, a few per list or watch. Unsubscribing stops recording and removes this informer's
 * series.
 *
 * ## Example
 * ```ts
 * import { Registry } from 'prom-client';
 * import { registerInformerMetrics } from 'rx-informer/prometheus';
 * import type { Informer } from 'rx-informer';
 *
 * declare const podInformer: Informer;
 * const registry = new Registry();
 * const recording = registerInformerMetrics(registry, podInformer);
 * // serve `await registry.metrics()` on /metrics; later: recording.unsubscribe();
 * ```
 *
 * @param registry where the metrics go.
 * @param informer the informer (its `name` and `metrics$`).
 * @param options the `name` label.
 * @returns the recording: unsubscribe to stop it and remove the series.
 * @throws MetricConflictError when the registry holds one of these names with another type or labels.
 */
export function registerInformerMetrics(registry: MetricsRegistry, informer: MeasuredInformer, options: InformerMetricsOptions = {}): Subscription {
  const name = options.name ?? informer.name;
  const metrics = informerMetricsIn(registry);
  const labels = { name };
  // Every series exists from the start, at zero: a rate over the first scrape is then right.
  for (const counter of [metrics.lists, metrics.watches, metrics.shortWatches]) counter.inc(labels, 0);
  for (const histogram of [metrics.listDuration, metrics.itemsPerList, metrics.watchDuration, metrics.itemsPerWatch]) histogram.zero(labels);
  for (const cause of RELIST_CAUSES) metrics.relists.inc({ name, cause }, 0);
  for (const type of WATCH_EVENT_TYPES) metrics.watchEvents.inc({ name, type }, 0);

  const record = (event: InformerMetricEvent): void => {
    switch (event.type) {
      case 'listStarted':
        metrics.lists.inc(labels);
        if (event.relist !== undefined) metrics.relists.inc({ name, cause: event.relist });
        return;
      case 'listEnded':
        if (event.outcome !== 'completed') return;
        metrics.listDuration.observe(labels, event.seconds);
        metrics.itemsPerList.observe(labels, event.items);
        return;
      case 'watchStarted':
        metrics.watches.inc(labels);
        return;
      case 'watchEnded':
        if (event.short) metrics.shortWatches.inc(labels);
        if (event.outcome === 'stopped') return;
        metrics.watchDuration.observe(labels, event.seconds);
        metrics.itemsPerWatch.observe(labels, event.events);
        return;
      case 'watchEvent': {
        metrics.watchEvents.inc({ name, type: event.eventType });
        const version = decimalTail(event.resourceVersion);
        if (version !== undefined) metrics.lastResourceVersion.set(labels, version);
        return;
      }
    }
  };

  const subscription = informer.metrics$.subscribe(record);
  subscription.add(() => {
    for (const metric of [metrics.lists, metrics.watches, metrics.shortWatches, metrics.listDuration, metrics.itemsPerList, metrics.watchDuration, metrics.itemsPerWatch, metrics.lastResourceVersion]) {
      metric.remove(labels);
    }
    for (const cause of RELIST_CAUSES) metrics.relists.remove({ name, cause });
    for (const type of WATCH_EVENT_TYPES) metrics.watchEvents.remove({ name, type });
  });
  return subscription;
}

/**
 * The 15 least significant digits of a decimal resourceVersion, as a number (exact below 2^53),
 * as client-go's `informer_store_resource_version` shows it; undefined for any other version.
 * resourceVersions are opaque: this is for display only, nothing compares them.
 */
function decimalTail(resourceVersion: string): number | undefined {
  if (!/^\d+$/.test(resourceVersion)) return undefined;
  return Number(resourceVersion.slice(-15));
}
