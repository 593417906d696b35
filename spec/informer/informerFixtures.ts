import { Observable, of, Subject, throwError } from 'rxjs';
import type { InformerError } from '../../lib/base/errors';
import type { ListOptions, ListPage, ListerWatcher, WatchEvent, WatchOptions } from '../../lib/sources/listerWatcher';
import type { KubeObject } from '../../lib/base/object';

/**
 * A ListerWatcher test double for informer tests: lists answer at once from `objects` (or fail
 * with `listError`, or never answer); every watch is a Subject the test drives; calls and open
 * watches are counted.
 */
export interface FakeListerWatcher extends ListerWatcher {
  readonly lists: ListOptions[];
  readonly watches: WatchOptions[];
  /** The Subject of the latest watch. */
  watch$(): Subject<WatchEvent>;
  openWatches(): number;
  objects: KubeObject[];
  listResourceVersion: string;
  listError: InformerError | undefined;
  listNever: boolean;
}

export function fakeListerWatcher(objects: KubeObject[] = []): FakeListerWatcher {
  const subjects: Subject<WatchEvent>[] = [];
  let open = 0;
  const fake: FakeListerWatcher = {
    lists: [],
    watches: [],
    objects,
    listResourceVersion: '10',
    listError: undefined,
    listNever: false,
    watch$: () => subjects[subjects.length - 1],
    openWatches: () => open,
    list(options) {
      fake.lists.push(options);
      if (fake.listNever) return new Observable<ListPage>(() => undefined);
      if (fake.listError !== undefined) return throwError(() => fake.listError);
      return of({ items: [...fake.objects], resourceVersion: fake.listResourceVersion, last: true, remainingItemCount: undefined });
    },
    watch(options) {
      fake.watches.push(options);
      const subject = new Subject<WatchEvent>();
      subjects.push(subject);
      return new Observable<WatchEvent>((subscriber) => {
        open += 1;
        const inner = subject.subscribe(subscriber);
        return () => {
          open -= 1;
          inner.unsubscribe();
        };
      });
    },
  };
  return fake;
}

export function pod(name: string, resourceVersion: string, namespace = 'default'): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, resourceVersion } };
}
