import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Subject } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { defaultLogger, silentLogger, stderrLogger } from '../../lib/base/logger';
import { handle } from '../../lib/handlers/handle';
import { informerFrom } from '../../lib/informer/informer';
import { reconcile } from '../../lib/workqueue/reconcile';
import type { Snapshot } from '../../lib/store/snapshot';
import { obj, replace, snapshotsOf } from '../handlers/handleFixtures';
import { fakeListerWatcher, pod } from '../informer/informerFixtures';
import type { KubeObject } from '../../lib/base/object';

/**
 * Failures are visible by default: where no `logger` is given, warnings and errors go to stderr,
 * one line each, with their level; `silentLogger` opts out.
 */

const LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARN|ERROR) /;

function newScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

/** Lines written to process.stderr while `run` runs (kept off the terminal). */
function stderrOf(run: () => void): string[] {
  const written: string[] = [];
  const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  try {
    run();
  } finally {
    spy.mockRestore();
  }
  return written;
}

describe('stderrLogger', () => {
  it('writes one line per entry at its level and above, with the time, the level, the message and the fields', () => {
    const lines: string[] = [];
    const logger = stderrLogger({ level: 'info', write: (line) => lines.push(line) });
    logger.debug({ informer: 'pods' }, 'listing');
    logger.info({ informer: 'pods', items: 3 }, 'list complete');
    logger.warn({ informer: 'pods', error: 'connect ECONNREFUSED' }, 'watch failed; retrying');
    logger.error({ handler: 'mirror', key: 'default/web', error: new TypeError('x is undefined'), skipped: undefined }, 'handler failed');
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line).toMatch(LINE);
    expect(lines.map((line) => line.replace(/^\S+ /, ''))).toEqual([
      'INFO list complete informer=pods items=3',
      'WARN watch failed; retrying informer=pods error="connect ECONNREFUSED"',
      'ERROR handler failed handler=mirror key=default/web error="TypeError: x is undefined"',
    ]);
  });

  it('keeps each entry on one line, whatever its message and values hold', () => {
    const lines: string[] = [];
    const logger = stderrLogger({ write: (line) => lines.push(line) });
    const circular: Record<string, unknown> = { a: 1 };
    circular.self = circular;
    logger.error({ error: new Error('first\nsecond'), detail: 'a "quoted"\nvalue', buckets: [1, 2], circular }, 'two\nlines');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('\n');
    expect(lines[0]!.replace(/^\S+ /, '')).toBe('ERROR two\\nlines error="Error: first\\nsecond" detail="a \\"quoted\\"\\nvalue" buckets=[1,2] circular="[object Object]"');
  });

  it('formats nothing for the levels it drops', () => {
    const read = jest.fn(() => 'x');
    const fields = {
      get costly() {
        return read();
      },
    };
    const lines: string[] = [];
    const logger = stderrLogger({ write: (line) => lines.push(line) });
    logger.debug(fields, 'dropped');
    logger.info(fields, 'dropped');
    expect(read).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
    stderrLogger({ level: 'silent', write: (line) => lines.push(line) }).error(fields, 'dropped');
    expect(lines).toEqual([]);
  });

  it('writes to process.stderr by default, and rejects an unknown level', () => {
    const written = stderrOf(() => stderrLogger().warn({ lease: 'default/controller' }, 'lost the lease'));
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(LINE);
    expect(written[0]).toMatch(/ WARN lost the lease lease=default\/controller\n$/);
    expect(() => stderrLogger({ level: 'loud' as 'warn' })).toThrow(RangeError);
  });
});

describe('the default logger', () => {
  it('is stderrLogger at warn: warnings and errors, nothing below', () => {
    const written = stderrOf(() => {
      defaultLogger.debug({}, 'd');
      defaultLogger.info({}, 'i');
      defaultLogger.warn({}, 'w');
      defaultLogger.error({}, 'e');
    });
    expect(written.map((line) => line.replace(/^\S+ /, ''))).toEqual(['WARN w\n', 'ERROR e\n']);
  });

  it('is what every stage uses where no logger is given: no lib/ file defaults to silentLogger', () => {
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (path.endsWith('.ts')) files.push(path);
      }
    };
    walk(join(__dirname, '../../lib'));
    const silentDefaults = files.filter((file) => /\?\?\s*silentLogger/.test(readFileSync(file, 'utf8')));
    expect(silentDefaults).toEqual([]);
  });

  it('shows a handler that throws, with no onError and no logger', () => {
    const scheduler = newScheduler();
    const [s1] = snapshotsOf([replace([obj('a', '1')])]);
    const written = stderrOf(() =>
      scheduler.run(({ flush }) => {
        const source = new Subject<Snapshot>();
        const subscription = source
          .pipe(
            handle(
              {
                onAdd: () => {
                  throw new TypeError('x is undefined');
                },
              },
              { scheduler, name: 'mirror' },
            ),
          )
          .subscribe();
        source.next(s1!);
        flush();
        subscription.unsubscribe();
      }),
    );
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(/ ERROR handler failed handler=mirror key=ns\/a notification=add error="TypeError: x is undefined"\n$/);
  });

  it('shows an object the informer cannot cache', () => {
    const scheduler = newScheduler();
    const nameless = { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'default', resourceVersion: '2' } } as unknown as KubeObject;
    const written = stderrOf(() => {
      const informer = informerFrom(fakeListerWatcher([pod('a', '1'), nameless]), { scheduler, name: 'pods' });
      informer.informer$.subscribe().unsubscribe();
      scheduler.flush();
    });
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(/ ERROR object not cached informer=pods /);
  });

  it('shows a reconcile that keeps failing from its fifth failure in a row on, not the first four', () => {
    const scheduler = newScheduler();
    const written = stderrOf(() =>
      scheduler.run(({ hot, flush }) => {
        let calls = 0;
        const subscription = hot('a')
          .pipe(
            reconcile(
              () => {
                if (++calls <= 6) throw new Error(`down ${calls}`);
              },
              { scheduler, name: 'mirror' },
            ),
          )
          .subscribe();
        flush();
        subscription.unsubscribe();
      }),
    );
    expect(written.map((line) => line.replace(/^\S+ /, ''))).toEqual([
      'WARN reconcile failed; retrying reconciler=mirror key=a failures=5 retryIn=80 error="down 5"\n',
      'WARN reconcile failed; retrying reconciler=mirror key=a failures=6 retryIn=160 error="down 6"\n',
    ]);
  });

  it('is silenced by silentLogger', () => {
    const scheduler = newScheduler();
    const [s1] = snapshotsOf([replace([obj('a', '1')])]);
    const written = stderrOf(() =>
      scheduler.run(({ flush }) => {
        const source = new Subject<Snapshot>();
        const subscription = source
          .pipe(
            handle(
              {
                onAdd: () => {
                  throw new TypeError('x is undefined');
                },
              },
              { scheduler, logger: silentLogger },
            ),
          )
          .subscribe();
        source.next(s1!);
        flush();
        subscription.unsubscribe();
      }),
    );
    expect(written).toEqual([]);
  });
});
