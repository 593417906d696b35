import type { KubeObject } from 'rx-informer';
import { ageOf, humanDuration } from './humanDuration';
import { column, NAME_COLUMN, AGE_COLUMN, type TablePrinter, type TableRowData } from './tableColumns';

/**
 * The pod columns of `kubectl get pods` (`-o wide` adds the priority-1 ones), computed as the API
 * server's pod printer computes them (kubernetes `pkg/printers/internalversion/printers.go`,
 * `printPod`): READY counts ready, running containers; STATUS is the reason a kubelet would give
 * (an init container's progress, a waiting or terminated container's reason, `Terminating`);
 * RESTARTS adds when the last one happened.
 */

interface ContainerState {
  readonly waiting?: { readonly reason?: string };
  readonly running?: object;
  readonly terminated?: { readonly reason?: string; readonly signal?: number; readonly exitCode?: number; readonly finishedAt?: string };
}

interface ContainerStatus {
  readonly name?: string;
  readonly ready?: boolean;
  readonly started?: boolean;
  readonly restartCount?: number;
  readonly state?: ContainerState;
  readonly lastState?: ContainerState;
}

interface PodShape {
  readonly metadata: { readonly name: string; readonly creationTimestamp?: string; readonly deletionTimestamp?: string };
  readonly spec?: {
    readonly containers?: readonly unknown[];
    readonly initContainers?: readonly { readonly name?: string; readonly restartPolicy?: string }[];
    readonly nodeName?: string;
    readonly readinessGates?: readonly { readonly conditionType?: string }[];
  };
  readonly status?: {
    readonly phase?: string;
    readonly reason?: string;
    readonly podIP?: string;
    readonly podIPs?: readonly { readonly ip?: string }[];
    readonly nominatedNodeName?: string;
    readonly conditions?: readonly { readonly type?: string; readonly status?: string; readonly reason?: string }[];
    readonly initContainerStatuses?: readonly ContainerStatus[];
    readonly containerStatuses?: readonly ContainerStatus[];
  };
}

/** `node.NodeUnreachablePodReason`: the node controller's reason for pods of a lost node. */
const NODE_LOST = 'NodeLost';

/** The latest `finishedAt` (ms) of a last termination, or 0. */
function lastTermination(status: ContainerStatus, since: number): number {
  const finished = Date.parse(status.lastState?.terminated?.finishedAt ?? '');
  return Number.isNaN(finished) ? since : Math.max(since, finished);
}

/** A terminated container's reason, or its signal or exit code. */
function terminationReason(terminated: NonNullable<ContainerState['terminated']>): string {
  if (terminated.reason !== undefined && terminated.reason !== '') return terminated.reason;
  return terminated.signal !== undefined && terminated.signal !== 0 ? `Signal:${terminated.signal}` : `ExitCode:${terminated.exitCode ?? 0}`;
}

function podRow(object: KubeObject, now: number): TableRowData {
  const pod = object as unknown as PodShape;
  const spec = pod.spec ?? {};
  const status = pod.status ?? {};
  const conditions = status.conditions ?? [];
  const phase = status.phase ?? '';
  let reason = status.reason !== undefined && status.reason !== '' ? status.reason : phase;
  if (conditions.some((c) => c.type === 'PodScheduled' && c.reason === 'SchedulingGated')) reason = 'SchedulingGated';

  const initContainers = new Map((spec.initContainers ?? []).map((c) => [c.name, c]));
  const restartable = (name: string | undefined): boolean => initContainers.get(name)?.restartPolicy === 'Always';
  const total = (spec.containers ?? []).length + (spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always').length;
  let ready = 0;
  let restarts = 0;
  let sidecarRestarts = 0;
  let lastRestart = 0;
  let lastSidecarRestart = 0;
  let initializing = false;
  const initStatuses = status.initContainerStatuses ?? [];
  for (const [i, container] of initStatuses.entries()) {
    restarts += container.restartCount ?? 0;
    lastRestart = lastTermination(container, lastRestart);
    if (restartable(container.name)) {
      sidecarRestarts += container.restartCount ?? 0;
      lastSidecarRestart = lastTermination(container, lastSidecarRestart);
    }
    const { terminated, waiting } = container.state ?? {};
    if (terminated !== undefined && (terminated.exitCode ?? 0) === 0) continue;
    if (restartable(container.name) && container.started === true) {
      if (container.ready === true) ready++;
      continue;
    }
    if (terminated !== undefined) {
      reason = `Init:${terminationReason(terminated)}`;
    } else if (waiting?.reason !== undefined && waiting.reason !== '' && waiting.reason !== 'PodInitializing') {
      reason = `Init:${waiting.reason}`;
    } else {
      reason = `Init:${i}/${(spec.initContainers ?? []).length}`;
    }
    initializing = true;
    break;
  }

  if (!initializing || conditions.some((c) => c.type === 'Initialized' && c.status === 'True')) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    let errorReason = '';
    const statuses = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const container = statuses[i]!;
      restarts += container.restartCount ?? 0;
      lastRestart = lastTermination(container, lastRestart);
      const { waiting, terminated, running } = container.state ?? {};
      if (waiting?.reason !== undefined && waiting.reason !== '') {
        reason = waiting.reason;
      } else if (terminated !== undefined) {
        reason = terminationReason(terminated);
        if ((terminated.exitCode ?? 0) !== 0) errorReason = reason;
      } else if (container.ready === true && running !== undefined) {
        hasRunning = true;
        ready++;
      }
    }
    // A pod whose containers completed but one still runs is Running again (or NotReady).
    if (reason === 'Completed') {
      if (hasRunning && conditions.some((c) => c.type === 'Ready' && c.status === 'True')) reason = 'Running';
      else if (errorReason !== '') reason = errorReason;
      else if (hasRunning) reason = 'NotReady';
    }
  }

  const deleting = pod.metadata.deletionTimestamp !== undefined;
  if (deleting && status.reason === NODE_LOST) reason = 'Unknown';
  else if (deleting && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';

  const restartsCell = restarts !== 0 && lastRestart !== 0 ? `${restarts} (${humanDuration(now - lastRestart)} ago)` : String(restarts);
  const podIP = status.podIPs?.[0]?.ip ?? status.podIP ?? '';
  const gates = spec.readinessGates ?? [];
  const trueGates = gates.filter((gate) => conditions.find((c) => c.type === gate.conditionType)?.status === 'True').length;
  return {
    cells: [
      pod.metadata.name,
      `${ready}/${total}`,
      reason,
      restartsCell,
      ageOf(pod.metadata.creationTimestamp, now),
      podIP === '' ? '<none>' : podIP,
      spec.nodeName === undefined || spec.nodeName === '' ? '<none>' : spec.nodeName,
      status.nominatedNodeName === undefined || status.nominatedNodeName === '' ? '<none>' : status.nominatedNodeName,
      gates.length === 0 ? '<none>' : `${trueGates}/${gates.length}`,
    ],
    ...(phase === 'Succeeded'
      ? { conditions: [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }] }
      : phase === 'Failed'
        ? { conditions: [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }] }
        : {}),
  };
}

/** Pods: NAME READY STATUS RESTARTS AGE, and IP NODE NOMINATED NODE READINESS GATES with -o wide. */
export const podPrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
    column('Status', 'string', 'The aggregate status of the containers in this pod.'),
    column('Restarts', 'string', 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.'),
    AGE_COLUMN,
    column('IP', 'string', 'podIP address allocated to the pod.', 1),
    column('Node', 'string', 'NodeName indicates in which node this pod is scheduled.', 1),
    column('Nominated Node', 'string', 'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods.', 1),
    column('Readiness Gates', 'string', 'If specified, all readiness gates will be evaluated for pod readiness.', 1),
  ],
  row: podRow,
};
