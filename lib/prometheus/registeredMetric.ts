import { Counter, Gauge, Histogram, type OpenMetricsContentType, type PrometheusContentType, type Registry } from 'prom-client';

/** A prom-client registry of either exposition format. */
export type MetricsRegistry = Registry<PrometheusContentType> | Registry<OpenMetricsContentType>;

/**
 * A metric of that name is already in the registry with another type or other labels, so the
 * one rx-informer would register cannot be: rename or remove the other one.
 */
export class MetricConflictError extends Error {
  /** The metric's name. */
  readonly metric: string;

  constructor(metric: string, problem: string) {
    super(`cannot register ${metric}: ${problem}`);
    this.name = 'MetricConflictError';
    this.metric = metric;
  }
}

/** What every rx-informer metric is: its name, help text and label names. */
export interface MetricShape<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
}

/**
 * The registry's metric of that name when it is of the expected kind and labels (a second
 * informer or queue on one registry shares the metric, under its own `name` label), else a new
 * one made by `make` and registered.
 * @throws MetricConflictError when the name is taken by a metric of another kind or labels.
 */
export function registeredMetric<M extends object, L extends string>(
  registry: MetricsRegistry,
  shape: MetricShape<L>,
  kind: abstract new (...args: never[]) => M,
  make: () => M,
): M {
  const existing = registry.getSingleMetric(shape.name);
  if (existing === undefined) return make();
  if (!(existing instanceof kind)) throw new MetricConflictError(shape.name, `the registry has a metric of that name of another type`);
  const labels = (existing as { readonly labelNames?: readonly string[] }).labelNames ?? [];
  if (labels.length !== shape.labelNames.length || labels.some((label, i) => label !== shape.labelNames[i])) {
    throw new MetricConflictError(shape.name, `the registry has it with labels [${labels.join(', ')}], not [${shape.labelNames.join(', ')}]`);
  }
  return existing;
}

/** The registry's counter `shape`, made if absent. */
export function counterIn<L extends string>(registry: MetricsRegistry, shape: MetricShape<L>): Counter<L> {
  return registeredMetric(registry, shape, Counter<L>, () => new Counter<L>({ ...shape, registers: [registry] }));
}

/** The registry's gauge `shape`, made if absent. */
export function gaugeIn<L extends string>(registry: MetricsRegistry, shape: MetricShape<L>): Gauge<L> {
  return registeredMetric(registry, shape, Gauge<L>, () => new Gauge<L>({ ...shape, registers: [registry] }));
}

/** The registry's histogram `shape` with `buckets`, made if absent. */
export function histogramIn<L extends string>(registry: MetricsRegistry, shape: MetricShape<L>, buckets: readonly number[]): Histogram<L> {
  return registeredMetric(registry, shape, Histogram<L>, () => new Histogram<L>({ ...shape, buckets: [...buckets], registers: [registry] }));
}
