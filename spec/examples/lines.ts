import { filter, firstValueFrom, ReplaySubject, timeout } from 'rxjs';
import { EVENTUALLY_MS, within } from '../support/eventually';

/**
 * The progress lines an example prints, to wait on instead of polling the server: an example logs
 * after each effect, so "the line arrived" means "the effect happened".
 */
export class Lines {
  readonly seen: string[] = [];
  private readonly stream = new ReplaySubject<{ readonly index: number; readonly line: string }>();

  /** Pass as the example's `log` option. */
  readonly log = (line: string): void => {
    this.stream.next({ index: this.seen.length, line });
    this.seen.push(line);
  };

  /** A mark: `waitFor(..., mark)` only counts lines logged after it. */
  mark(): number {
    return this.seen.length;
  }

  /** Resolves with the first line from `from` on that matches; rejects after `ms` with what was seen. */
  async waitFor(pattern: RegExp | string, from = 0, ms = 10_000): Promise<string> {
    const matches = (line: string): boolean => (typeof pattern === 'string' ? line === pattern : pattern.test(line));
    try {
      const { line } = await firstValueFrom(
        this.stream.pipe(
          filter((entry) => entry.index >= from && matches(entry.line)),
          timeout(ms),
        ),
      );
      return line;
    } catch {
      throw new Error(`no line matching ${String(pattern)} after line ${from}; saw:\n${this.seen.join('\n')}`);
    }
  }

  /** Resolves as `promise` does; after `ms` rejects naming `description` and the lines seen so far. */
  settled<T>(promise: Promise<T>, description: string, ms = EVENTUALLY_MS): Promise<T> {
    return within(promise, ms, description, () => this.seen);
  }
}
