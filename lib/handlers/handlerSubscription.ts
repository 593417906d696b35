import type { SchedulerLike, Subscriber } from 'rxjs';
import type { Logger } from '../base/logger';
import type { KubeObject } from '../base/object';
import type { Snapshot } from '../store/snapshot';
import { DeliveryLoop, type DeliveryTarget } from './deliveryLoop';
import type { HandlerEvent, ResourceHandlers } from './resourceHandlers';
import { HandlerQueueOverflowError, type HandlerNotification } from './notifications';
import { InitialPass, ResyncPass } from './passes';
import { PendingChanges } from './pendingChanges';

/** How one `handle()` subscription is configured. */
export interface HandlerSettings<T extends KubeObject> {
  readonly handlers: ResourceHandlers<T>;
  readonly scheduler: SchedulerLike;
  readonly maxPending: number;
  readonly logger: Logger;
  readonly name: string | undefined;
}

/**
 * The state of one `handle()` subscription, all of it its own: what it has still to deliver (the
 * initial pass, then its pending changes, then a resync pass), whether it has synced, and its
 * delivery loop. Nothing is shared with other subscriptions but the immutable snapshots.
 */
export class HandlerSubscription<T extends KubeObject> implements DeliveryTarget<HandlerNotification<T>> {
  private pending: PendingChanges<T> | undefined;
  private initialPass: InitialPass<T> | undefined;
  private resyncPass: ResyncPass<T> | undefined;
  /** A synced snapshot has arrived: the handler syncs once everything up to it is delivered. */
  private syncMarked = false;
  private synced = false;
  private sourceDone = false;
  private closed = false;
  private readonly loop: DeliveryLoop<HandlerNotification<T>>;

  constructor(
    private readonly settings: HandlerSettings<T>,
    private readonly subscriber: Subscriber<HandlerEvent<T>>,
  ) {
    this.loop = new DeliveryLoop(settings.scheduler, this);
  }

  snapshot(snapshot: Snapshot<T>): void {
    const pending = this.pending;
    if (pending === undefined) this.start(snapshot);
    else pending.receive(snapshot);
    if (snapshot.synced && !this.syncMarked) {
      this.syncMarked = true;
      this.pending!.markSync();
    }
    this.loop.wake();
  }

  /** The first snapshot: the initial pass delivers it, and the changes after it are pending. */
  private start(snapshot: Snapshot<T>): PendingChanges<T> {
    const { maxPending } = this.settings;
    const pending = new PendingChanges(snapshot, maxPending, (notification) => this.report(new HandlerQueueOverflowError(notification, maxPending), notification, 'warn'));
    const pass = new InitialPass(snapshot); // held until the pass is done: a first list's adds are its pass
    this.initialPass = pass.done ? undefined : pass;
    return (this.pending = pending);
  }

  resync(snapshot: Snapshot<T>): void {
    // A handler still working through a pass is already seeing every object.
    if (this.resyncPass !== undefined || this.initialPass !== undefined || !this.synced) return;
    this.resyncPass = new ResyncPass(snapshot, () => this.pending!.latest);
    this.loop.wake();
  }

  complete(): void {
    this.sourceDone = true;
    this.loop.wake();
  }

  close(): void {
    this.closed = true;
    this.loop.close();
  }

  /** The initial pass goes first; later, real changes go before a resync pass. */
  next(): HandlerNotification<T> | undefined {
    const initialPass = this.initialPass;
    if (initialPass !== undefined) {
      const notification = initialPass.next();
      if (initialPass.done) this.initialPass = undefined;
      return notification;
    }
    const change = this.pending?.next();
    if (change !== undefined) return change;
    const resyncPass = this.resyncPass;
    if (resyncPass === undefined) return undefined;
    const notification = resyncPass.next();
    if (notification === undefined) this.resyncPass = undefined;
    return notification;
  }

  call(notification: HandlerNotification<T>): unknown {
    const handlers = this.settings.handlers;
    try {
      switch (notification.type) {
        // The notification itself is the `info` argument: it has the fields the callbacks declare,
        // and passing it saves an object per call.
        case 'add':
          return handlers.onAdd?.(notification.object, notification);
        case 'update':
          return handlers.onUpdate?.(notification.oldObject, notification.object, notification);
        case 'delete':
          return handlers.onDelete?.(notification.object, notification);
      }
    } catch (error: unknown) {
      this.report(error, notification);
      return undefined;
    }
  }

  rejected(error: unknown, notification: HandlerNotification<T>): void {
    this.report(error, notification);
  }

  delivered(): void {
    this.checkSynced();
  }

  idle(): void {
    this.checkSynced();
    // `next` just came back empty: no pass is left and nothing is pending.
    if (this.sourceDone) this.subscriber.complete();
  }

  failed(error: unknown): void {
    this.subscriber.error(error);
  }

  private checkSynced(): void {
    if (this.synced || !this.syncMarked || this.initialPass !== undefined || !this.pending!.syncReached()) return;
    this.synced = true;
    try {
      this.settings.handlers.onSynced?.();
    } catch (error: unknown) {
      this.settings.logger.error({ handler: this.settings.name, error }, 'onSynced threw');
    }
    this.subscriber.next({ type: 'synced' });
  }

  /** Tells `onError`, the logger and the subscriber; an overflow is logged as a warning, not a failure. */
  private report(error: unknown, notification: HandlerNotification<T>, level: 'error' | 'warn' = 'error'): void {
    if (this.closed) return;
    const { logger, name, handlers } = this.settings;
    const fields = { handler: name, key: notification.key, notification: notification.type, error };
    if (level === 'warn') logger.warn(fields, 'handler fell behind: catching up from the cache');
    else logger.error(fields, 'handler failed');
    try {
      handlers.onError?.(error, notification);
    } catch (onErrorFailure: unknown) {
      logger.error({ handler: name, error: onErrorFailure }, 'onError threw');
    }
    this.subscriber.next({ type: 'error', error, notification });
  }
}
