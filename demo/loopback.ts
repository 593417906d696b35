/**
 * The demo's embedded cluster: the loopback API server with a churning population of the watched
 * resource. Pods (and namespaces) come from the library's churn generator; any other resource gets
 * plain objects whose `generation` and labels change, created, updated and deleted 1:8:1.
 */
import { type KubeObject, type Resource } from '../lib';
import { builtinResources, createChurn, seededRandom, startApiServer, type ApiServer, type ChurnStore, type Random } from '../apiserver/src';

/** What to populate the loopback cluster with. */
export interface LoopbackOptions {
  readonly resource: Resource<KubeObject>;
  readonly objects: number;
  readonly namespaces: number;
  /** Mutations per second. */
  readonly churn: number;
  readonly seed: number;
}

/** A running loopback cluster: stop the churn, then close the server. */
export interface Loopback {
  readonly server: ApiServer;
  /** One line on what is running, for the title of the view. */
  readonly description: string;
  stop(): Promise<void>;
}

/** Starts the server, fills it and starts the churn. */
export async function startLoopback(options: LoopbackOptions): Promise<Loopback> {
  const { resource } = options;
  const builtin = builtinResources.some((served) => served.resource.group === resource.group && served.resource.plural === resource.plural);
  const server = await startApiServer(builtin ? {} : { resources: [resource] });
  const rates = { createsPerSecond: options.churn / 10, updatesPerSecond: (options.churn * 8) / 10, deletesPerSecond: options.churn / 10 };
  const usesPods = resource.group === '' && (resource.plural === 'pods' || resource.plural === 'namespaces');
  const churn = usesPods
    ? createChurn(server.store, { seed: options.seed, namespaces: options.namespaces, pods: options.objects, managedFields: true, ...rates })
    : new PlainChurn(server.store, resource, options);
  churn.populate();
  churn.start();
  const scope = resource.plural === 'namespaces' ? `${options.namespaces} namespaces, ${options.objects} pods churning` : `${options.objects} ${resource.plural}`;
  return {
    server,
    description: `loopback ${server.url} (${scope}, churn ${options.churn}/s)`,
    stop: async () => {
      churn.stop();
      await server.close();
    },
  };
}

/** Churn for resources the pod generator does not know: objects with a label and a counter. */
class PlainChurn {
  private readonly random: Random;
  private readonly names: string[] = [];
  private created = 0;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly store: ChurnStore,
    private readonly resource: Resource<KubeObject>,
    private readonly options: LoopbackOptions,
  ) {
    this.random = seededRandom(options.seed);
  }

  populate(): void {
    for (let i = 0; i < this.options.objects; i++) this.create();
  }

  start(): void {
    if (this.options.churn <= 0) return;
    let due = 0;
    const periodMs = 100;
    this.timer = setInterval(() => {
      due += (this.options.churn * periodMs) / 1000;
      for (; due >= 1; due--) this.step();
    }, periodMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private step(): void {
    const draw = this.random();
    if (this.names.length === 0 || draw < 0.1) this.create();
    else if (draw < 0.9) this.update();
    else this.delete();
  }

  private create(): void {
    const index = this.created++;
    const namespace = this.resource.namespaced ? `ns-${index % this.options.namespaces}` : undefined;
    const name = `${this.resource.kind.toLowerCase()}-${index}`;
    const apiVersion = this.resource.group === '' ? this.resource.version : `${this.resource.group}/${this.resource.version}`;
    this.store.create(this.resource, { apiVersion, kind: this.resource.kind, metadata: { name, ...(namespace === undefined ? {} : { namespace }), labels: { app: `app-${index % 5}` } } });
    this.names.push(`${namespace ?? ''}/${name}`);
  }

  private update(): void {
    const [namespace, name] = this.pickName();
    const current = this.store.get(this.resource, namespace, name);
    if (current === undefined) return;
    const labels = { ...current.metadata.labels, revision: String(Math.floor(this.random() * 1000)) };
    this.store.update(this.resource, { ...current, metadata: { ...current.metadata, labels } });
  }

  private delete(): void {
    const index = Math.floor(this.random() * this.names.length);
    const [namespace, name] = this.pickName(index);
    // Swap-remove: O(1), order does not matter.
    this.names[index] = this.names[this.names.length - 1] as string;
    this.names.pop();
    if (this.store.get(this.resource, namespace, name) !== undefined) this.store.delete(this.resource, namespace, name);
  }

  private pickName(index = Math.floor(this.random() * this.names.length)): [string | undefined, string] {
    const [namespace, name] = (this.names[index] as string).split('/') as [string, string];
    return [namespace === '' ? undefined : namespace, name];
  }
}
