import { Subject, type Observable } from 'rxjs';
import type { KubeObject } from '../base/object';
import type { Delta } from '../reflector/delta';
import type { Health, ReflectorPhase } from '../reflector/health';
import type { RequestEvent } from '../reflector/requestEvent';
import type { InformerHealthTracker } from './informerHealth';
import { RequestsInFlight } from './informerMetrics';

/**
 * The reports of an informer's reflector runs, gathered for its `health$` and `metrics$`. Each run
 * reports through its own {@link RunLane}: one at a time for most informers (the next run ends the
 * one before), several at once for an informer over a set of namespaces (one reflector per
 * namespace).
 *
 * 1. Health: the informer shows its least healthy running lane: one backing off before one
 *    listing before one watching; among equals, the one with more failed attempts, then the one
 *    in its phase longest. With one lane, that lane's reports pass as they are.
 * 2. Requests: each lane's request reports pass on as they come, and a lane that stops reports its
 *    request in flight `stopped` (its own stream is closed by then), with the items it delivered.
 * 3. When the last lane stops, health turns idle with the attempts and error it stopped with.
 */
export class RunReports {
  private readonly lanes = new Set<RunLane>();
  private readonly requestBus = new Subject<RequestEvent>();
  /** The report health$ shows now, if a lane's. */
  private shown: Health | undefined;
  /** Every lane's request reports, stopped ones included. */
  readonly requests$: Observable<RequestEvent> = this.requestBus.asObservable();

  constructor(private readonly health: InformerHealthTracker) {}

  /** A lane for a run that starts now; stop it when the run ends. */
  lane(): RunLane {
    const lane = new RunLane(new RequestsInFlight(this.requestBus), (reporting) => this.reported(reporting), (stopped, at) => this.stopped(stopped, at));
    this.lanes.add(lane);
    return lane;
  }

  private reported(lane: RunLane): void {
    this.show(this.lanes.size === 1 ? lane.latest! : leastHealthy(this.lanes)!);
  }

  private stopped(lane: RunLane, at: number): void {
    if (!this.lanes.delete(lane)) return;
    const remaining = leastHealthy(this.lanes);
    if (remaining !== undefined) return this.show(remaining);
    this.shown = undefined;
    this.health.stopped(at);
  }

  /** Passes a lane's report on, unless it is the one shown already (a healthier lane stopped). */
  private show(report: Health): void {
    if (report === this.shown) return;
    this.shown = report;
    this.health.reflector(report);
  }
}

/** One run's reports: its latest health and its request in flight. */
export class RunLane {
  /** The run's latest health report; undefined before its first. */
  latest: Health | undefined;

  constructor(
    private readonly requests: RequestsInFlight,
    private readonly onHealth: (lane: RunLane) => void,
    private readonly onStop: (lane: RunLane, at: number) => void,
  ) {}

  /** A health report of the run. */
  health(report: Health): void {
    this.latest = report;
    this.onHealth(this);
  }

  /** A request report of the run. */
  request(event: RequestEvent): void {
    this.requests.report(event);
  }

  /** A delta of the run: items of its request in flight. */
  count(delta: Delta<KubeObject>): void {
    this.requests.count(delta);
  }

  /** The run ended at `at` (stopped, or replaced by the next): its request in flight is reported stopped. */
  stop(at: number): void {
    this.requests.stopped(at);
    this.onStop(this, at);
  }
}

const SEVERITY: Readonly<Record<ReflectorPhase, number>> = { backingOff: 3, listing: 2, watching: 1, idle: 0 };

/** Rule 1: the health of the least healthy lane that has reported; undefined when none has. */
function leastHealthy(lanes: Iterable<RunLane>): Health | undefined {
  let worst: Health | undefined;
  for (const lane of lanes) {
    const health = lane.latest;
    if (health === undefined) continue;
    if (worst === undefined || worse(health, worst)) worst = health;
  }
  return worst;
}

function worse(a: Health, b: Health): boolean {
  const severity = SEVERITY[a.phase] - SEVERITY[b.phase];
  if (severity !== 0) return severity > 0;
  if (a.attempt !== b.attempt) return a.attempt > b.attempt;
  return a.since < b.since;
}
