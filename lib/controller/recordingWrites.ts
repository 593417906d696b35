import type { Observable, Subscription } from 'rxjs';
import type { KubeObject } from '../base/object';
import type { Resource } from '../resources/resource';
import type { ControllerWrites } from './controllerRequest';
import type { DeleteOptions, ObjectClient, ObjectPatch, ObjectRef } from './objectClient';

/** What a write did to an object, as its answer tells: where it is now, or that it is gone. */
export interface WriteOutcome {
  readonly resource: Resource<KubeObject>;
  /** The answer; for a delete answered with a Status, a stand-in with the target's name, namespace and uid. */
  readonly object: KubeObject;
  readonly uid: string | undefined;
  /** The answered resourceVersion ('' when none). */
  readonly resourceVersion: string;
  /** The write deleted the object (or an earlier write had, and this one found it gone). */
  readonly deleted: boolean;
}

/**
 * The writes of one reconcile: {@link ObjectClient} requests as Promises that reject with the
 * reconcile's signal's reason when it aborts (the request is aborted too), each answer handed to
 * `record`. An answer that shows its object deleted (a `deletionTimestamp` and no finalizer left:
 * the write removed the last one) or a delete answered with a Status is recorded as a deletion.
 *
 * @param client where the requests go; undefined rejects every write, saying how to give one.
 * @param signal the reconcile's signal.
 * @param record receives each write's outcome.
 */
export function recordingWrites(client: ObjectClient | undefined, signal: AbortSignal, record: (outcome: WriteOutcome) => void): ControllerWrites {
  const send = <R>(request: (client: ObjectClient) => Observable<R>, outcome: (answer: R) => WriteOutcome): Promise<R> => {
    if (client === undefined) return Promise.reject(new Error('this controller cannot write: give controller() a kubeConfig or a client'));
    return untilAborted(request(client), signal).then((answer) => {
      record(outcome(answer));
      return answer;
    });
  };
  return {
    create: (resource, object) => send((c) => c.create(resource, object), (answer) => outcomeOf(resource, answer)),
    patch: (resource, target, patch: ObjectPatch) => send((c) => c.patch(resource, refOf(target), patch), (answer) => outcomeOf(resource, answer)),
    delete: (resource, target, options?: DeleteOptions) =>
      send(
        (c) => c.delete(resource, refOf(target), options),
        (answer) => {
          if (answer !== undefined) return outcomeOf(resource, answer, true);
          const ref = refOf(target);
          const uid = 'metadata' in target ? target.metadata.uid : undefined;
          const object: KubeObject = { metadata: { name: ref.name, ...(ref.namespace === undefined ? {} : { namespace: ref.namespace }), ...(uid === undefined ? {} : { uid }) } };
          return { resource, object, uid, resourceVersion: '', deleted: true };
        },
      ),
    wrote: (resource, answer) => record(outcomeOf(resource, answer)),
  };
}

/** What an answer says about its object; `fromDelete`: an answer to a DELETE (gone unless finalizers hold it). */
function outcomeOf(resource: Resource<KubeObject>, answer: KubeObject, fromDelete = false): WriteOutcome {
  const { uid, resourceVersion, deletionTimestamp, finalizers } = answer.metadata;
  const held = (finalizers ?? []).length > 0;
  const deleted = fromDelete ? !held : deletionTimestamp !== undefined && !held;
  return { resource, object: answer, uid, resourceVersion: resourceVersion ?? '', deleted };
}

function refOf(target: ObjectRef | KubeObject): ObjectRef {
  if ('metadata' in target) return { namespace: target.metadata.namespace, name: target.metadata.name };
  return target;
}

/** The first value of `source` as a Promise; unsubscribed and rejected with the signal's reason when it aborts. */
function untilAborted<T>(source: Observable<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    let done = false;
    let subscription: Subscription | undefined;
    const onAbort = (): void => {
      subscription?.unsubscribe();
      finish(() => reject(signal.reason));
    };
    const finish = (settle: () => void): void => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onAbort);
      settle();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    subscription = source.subscribe({
      next: (value) => finish(() => resolve(value)),
      error: (error: unknown) => finish(() => reject(error)),
      complete: () => finish(() => reject(new Error('the write completed without an answer'))),
    });
    if (done) subscription.unsubscribe();
  });
}
