import type { SchedulerLike, Subscription } from 'rxjs';

/**
 * The requests and timers a Lease protocol has in flight (an elector's, a ring member's): each is
 * kept until it reports done or is cancelled, and `cancelAll` stops every one at once.
 */
export class PendingWork {
  private readonly open = new Set<Subscription>();

  /** Starts `start` and keeps its subscription until it calls `done`. */
  track(start: (done: () => void) => Subscription): void {
    let subscription: Subscription | undefined;
    let finished = false;
    subscription = start(() => {
      finished = true;
      if (subscription !== undefined) this.open.delete(subscription);
    });
    if (!finished) this.open.add(subscription);
  }

  /** Runs `action` after `delay` on `scheduler`, unless cancelled first. */
  after(scheduler: SchedulerLike, delay: number, action: () => void): void {
    this.track((done) =>
      scheduler.schedule(() => {
        done();
        action();
      }, delay),
    );
  }

  /** Cancels everything in flight. */
  cancelAll(): void {
    for (const subscription of [...this.open]) subscription.unsubscribe();
    this.open.clear();
  }
}
