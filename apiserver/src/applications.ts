/**
 * Large custom resources for the benchmarks' object-size dimension: a GitOps `Application` shaped
 * like Argo CD's (argoproj.io/v1alpha1), whose status lists every resource it manages, its sync
 * history and the last operation's per-resource results. Those lists are what make real custom
 * resources of this kind tens of kilobytes, and so are these (docs/PERFORMANCE.md, "Method").
 */
import { defineResource, type Resource } from 'rx-informer';
import type { KubeObject } from 'rx-informer';
import { NAME_ALPHABET, timestamp } from './pods';
import { pick, randomHex, randomInt, randomString, type Random } from './random';

/** One resource an Application manages, as its status lists it. */
export interface ManagedResourceStatus {
  readonly group?: string;
  readonly version: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly status: 'Synced' | 'OutOfSync';
  readonly health?: { readonly status: 'Healthy' | 'Progressing' | 'Degraded'; readonly message?: string };
}

/** A GitOps Application: where its manifests come from, where they go, and what was deployed. */
export interface Application extends KubeObject {
  readonly spec: {
    readonly project: string;
    readonly source: { readonly repoURL: string; readonly path: string; readonly targetRevision: string; readonly helm?: { readonly valueFiles: readonly string[]; readonly parameters: readonly { readonly name: string; readonly value: string }[] } };
    readonly destination: { readonly server: string; readonly namespace: string };
    readonly syncPolicy: { readonly automated: { readonly prune: boolean; readonly selfHeal: boolean }; readonly syncOptions: readonly string[]; readonly retry: { readonly limit: number } };
  };
  readonly status: {
    readonly resources: readonly ManagedResourceStatus[];
    readonly sync: { readonly status: 'Synced' | 'OutOfSync'; readonly revision: string };
    readonly health: { readonly status: 'Healthy' | 'Progressing' | 'Degraded' };
    readonly history: readonly { readonly id: number; readonly revision: string; readonly deployedAt: string; readonly deployStartedAt: string; readonly source: { readonly repoURL: string; readonly path: string; readonly targetRevision: string } }[];
    readonly operationState: {
      readonly phase: 'Succeeded' | 'Running' | 'Failed';
      readonly message: string;
      readonly startedAt: string;
      readonly finishedAt: string;
      readonly syncResult: { readonly revision: string; readonly resources: readonly (ManagedResourceStatus & { readonly message: string; readonly hookPhase: string; readonly syncPhase: string })[] };
    };
    readonly summary: { readonly images: readonly string[] };
    readonly reconciledAt: string;
  };
}

/** `argoproj.io/v1alpha1 applications`, namespaced, as its CustomResourceDefinition serves it. */
export const applications: Resource<Application> = defineResource<Application>({
  group: 'argoproj.io',
  version: 'v1alpha1',
  plural: 'applications',
  kind: 'Application',
  namespaced: true,
});

const EPOCH_2026 = Date.UTC(2026, 0, 1);
/** What one component of an application deploys: kind, group/version, how many per component. */
const COMPONENT_KINDS: readonly { readonly group?: string; readonly version: string; readonly kind: string }[] = [
  { group: 'apps', version: 'v1', kind: 'Deployment' },
  { version: 'v1', kind: 'Service' },
  { version: 'v1', kind: 'ConfigMap' },
  { version: 'v1', kind: 'Secret' },
  { version: 'v1', kind: 'ServiceAccount' },
  { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' },
  { group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' },
  { group: 'policy', version: 'v1', kind: 'PodDisruptionBudget' },
  { group: 'monitoring.coreos.com', version: 'v1', kind: 'ServiceMonitor' },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'RoleBinding' },
];
const COMPONENTS = ['api', 'worker', 'web', 'cron', 'migrations', 'cache'] as const;
const TEAMS = ['payments', 'search', 'identity', 'platform', 'growth', 'data'] as const;
const HISTORY = 12;
const SYNC_RESULTS = 30;

/**
 * A realistic Argo CD–style Application, tens of kilobytes of JSON: 60 managed resources (six
 * components × ten kinds) with sync and health status, twelve history entries, the last sync's
 * per-resource results, and image summary. Deterministic for a given `random`; `uid`,
 * `resourceVersion` and `creationTimestamp` are left for the store to set.
 *
 * ## Example
 * ```ts
 * const app = makeApplication(seededRandom(7), 'team-a', 'checkout');
 * ```
 */
export function makeApplication(random: Random, namespace: string, name: string): Application {
  const team = pick(random, TEAMS);
  const repoURL = `https://git.example.com/${team}/${name}-deploy.git`;
  const path = `environments/production/${name}`;
  const target = `${namespace}-${name}`;
  const revision = randomHex(random, 40);
  const deployedAt = EPOCH_2026 + randomInt(random, 30 * 24 * 3600) * 1000;
  const resources: ManagedResourceStatus[] = [];
  for (const component of COMPONENTS) {
    const suffix = randomString(random, NAME_ALPHABET, 5);
    for (const kind of COMPONENT_KINDS) {
      const healthy = random() < 0.95;
      resources.push({
        ...(kind.group === undefined ? {} : { group: kind.group }),
        version: kind.version,
        kind: kind.kind,
        namespace: target,
        name: `${name}-${component}-${suffix}`,
        status: healthy ? 'Synced' : 'OutOfSync',
        ...(kind.kind === 'Deployment' || kind.kind === 'Service' || kind.kind === 'Ingress'
          ? { health: healthy ? { status: 'Healthy' as const } : { status: 'Progressing' as const, message: `Waiting for rollout to finish: 1 of 3 updated replicas are available...` } }
          : {}),
      });
    }
  }
  const history = Array.from({ length: HISTORY }, (_, id) => {
    const at = deployedAt - (HISTORY - id) * 3_600_000;
    return { id, revision: id === HISTORY - 1 ? revision : randomHex(random, 40), deployedAt: timestamp(at + 42_000), deployStartedAt: timestamp(at), source: { repoURL, path, targetRevision: 'main' } };
  });
  const syncResources = resources.slice(0, SYNC_RESULTS).map((resource) => ({
    ...resource,
    message: `${resource.kind.toLowerCase()}${resource.group === undefined ? '' : `.${resource.group}`}/${resource.name} configured`,
    hookPhase: 'Succeeded',
    syncPhase: 'Sync',
  }));
  const images = COMPONENTS.map((component) => `registry.example.com/${team}/${name}-${component}:1.${randomInt(random, 40)}.${randomInt(random, 20)}`);
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name,
      namespace,
      labels: { team, 'app.kubernetes.io/part-of': name, environment: 'production' },
      annotations: { 'notifications.argoproj.io/subscribe.on-sync-failed.slack': `${team}-alerts` },
      finalizers: ['resources-finalizer.argocd.argoproj.io'],
    },
    spec: {
      project: team,
      source: {
        repoURL,
        path,
        targetRevision: 'main',
        helm: { valueFiles: ['values.yaml', 'values-production.yaml'], parameters: [{ name: 'image.tag', value: images[0]!.split(':')[1]! }, { name: 'replicaCount', value: String(2 + randomInt(random, 6)) }] },
      },
      destination: { server: 'https://kubernetes.default.svc', namespace: target },
      syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ['CreateNamespace=true', 'ServerSideApply=true'], retry: { limit: 5 } },
    },
    status: {
      resources,
      sync: { status: resources.every((resource) => resource.status === 'Synced') ? 'Synced' : 'OutOfSync', revision },
      health: { status: resources.every((resource) => resource.health === undefined || resource.health.status === 'Healthy') ? 'Healthy' : 'Progressing' },
      history,
      operationState: {
        phase: 'Succeeded',
        message: 'successfully synced (all tasks run)',
        startedAt: timestamp(deployedAt),
        finishedAt: timestamp(deployedAt + 42_000),
        syncResult: { revision, resources: syncResources },
      },
      summary: { images },
      reconciledAt: timestamp(deployedAt + 600_000),
    },
  };
}
