import type { VirtualTimeScheduler } from 'rxjs';

/**
 * Runs everything due on `time` up to and including virtual time `t`, and leaves its clock at `t`
 * (`flush()` leaves it at the last action it ran), so that the next step starts there.
 */
export function runTo(time: VirtualTimeScheduler, t: number): void {
  time.maxFrames = t;
  time.flush();
  time.frame = Math.max(time.frame, t);
}

/** Runs `action` at virtual time `t` of `time`. */
export function at(time: VirtualTimeScheduler, t: number, action: () => void): void {
  time.schedule(action, t - time.now());
}
