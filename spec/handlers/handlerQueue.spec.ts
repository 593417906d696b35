import fc from 'fast-check';
import { CoalescingQueue } from '../../lib/handlers/handlerQueue';
import type { HandlerNotification } from '../../lib/handlers/notifications';
import { obj } from './handleFixtures';

const add = (name: string, rv: string, isInInitialList = false): HandlerNotification => ({ type: 'add', key: name, object: obj(name, rv), isInInitialList });
const update = (name: string, from: string, to: string, isResync = false): HandlerNotification => ({
  type: 'update',
  key: name,
  oldObject: obj(name, from),
  object: obj(name, to),
  isResync,
});
const del = (name: string, rv: string, finalStateUnknown = false): HandlerNotification => ({ type: 'delete', key: name, object: obj(name, rv), finalStateUnknown });

function drain(queue: CoalescingQueue): HandlerNotification[] {
  const out: HandlerNotification[] = [];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) out.push(next);
  return out;
}

function queueOf(...notifications: HandlerNotification[]): CoalescingQueue {
  const queue = new CoalescingQueue();
  for (const notification of notifications) queue.push(notification);
  return queue;
}

describe('CoalescingQueue', () => {
  it('hands out keys in the order they became pending', () => {
    expect(drain(queueOf(add('a', '1'), add('b', '1'), update('a', '1', '2')))).toEqual([add('a', '2'), add('b', '1')]);
  });

  it('folds add then update into one add of the newer state, keeping isInInitialList', () => {
    expect(drain(queueOf(add('a', '1', true), update('a', '1', '2')))).toEqual([add('a', '2', true)]);
  });

  it('keeps a handover mark through folds: an acquired add stays marked when updates fold into it, before or after a delete', () => {
    const handover = { acquired: [3], released: [], served: [3], bucketOf: () => 3 };
    const mark = { type: 'acquired', bucket: 3, handover } as const;
    const marked = (name: string, rv: string): HandlerNotification => ({ type: 'add', key: name, object: obj(name, rv), isInInitialList: false, handover: mark });
    expect(drain(queueOf(marked('a', '1'), update('a', '1', '2')))).toEqual([marked('a', '2')]);
    expect(drain(queueOf(del('a', '1'), marked('a', '5'), update('a', '5', '6')))).toEqual([del('a', '1'), marked('a', '6')]);
  });

  it('drops add then delete: the handler never saw the object', () => {
    expect(drain(queueOf(add('a', '1'), del('a', '1'), add('b', '1')))).toEqual([add('b', '1')]);
  });

  it('folds updates into one update from the oldest to the newest state', () => {
    expect(drain(queueOf(update('a', '1', '2'), update('a', '2', '3'), update('a', '3', '4')))).toEqual([update('a', '1', '4')]);
  });

  it('keeps an update a resync only while every folded update was one', () => {
    expect(drain(queueOf(update('a', '1', '1', true), update('a', '1', '1', true)))).toEqual([update('a', '1', '1', true)]);
    expect(drain(queueOf(update('a', '1', '1', true), update('a', '1', '2')))).toEqual([update('a', '1', '2')]);
  });

  it('folds update then delete into the delete', () => {
    expect(drain(queueOf(update('a', '1', '2'), del('a', '2', true)))).toEqual([del('a', '2', true)]);
  });

  it('keeps a delete followed by a re-creation as a delete then an add', () => {
    expect(drain(queueOf(del('a', '1'), add('a', '5'), update('a', '5', '6'), add('b', '1')))).toEqual([del('a', '1'), add('a', '6'), add('b', '1')]);
    expect(drain(queueOf(del('a', '1'), add('a', '5'), del('a', '5')))).toEqual([del('a', '1')]);
  });

  it('collapses duplicate deletes', () => {
    expect(drain(queueOf(del('a', '1'), del('a', '1')))).toEqual([del('a', '1')]);
  });

  it('holds one entry per key however many changes arrive', () => {
    const queue = new CoalescingQueue();
    queue.push(add('a', '0'));
    for (let i = 1; i <= 10_000; i++) queue.push(update('a', String(i - 1), String(i)));
    expect(queue.size).toBe(1);
  });

  it('tells whether a key is pending, and what each pending key is owed first, in line order', () => {
    const queue = queueOf(update('a', '1', '2'), del('b', '1'), add('b', '3'), add('c', '1'), del('c', '1'), update('a', '2', '3'));
    expect(queue.has('a')).toBe(true);
    expect(queue.has('c')).toBe(false);
    expect([...queue.owed()]).toEqual([update('a', '1', '3'), del('b', '1')]);
  });

  it('reports the sequence of its oldest entry, so a caller can tell when earlier pushes are delivered', () => {
    const queue = queueOf(add('a', '1'), add('b', '1'));
    expect(queue.headSeq()).toBe(1);
    queue.shift();
    expect(queue.headSeq()).toBe(2);
    queue.shift();
    expect(queue.headSeq()).toBe(Infinity);
    expect(queue.lastSeq).toBe(2);
  });
});

describe('CoalescingQueue against a naive model', () => {
  /** The same rules on a plain array searched linearly: slow, obviously ordered. */
  class ModelQueue {
    private entries: { key: string; first: HandlerNotification; then: HandlerNotification | undefined }[] = [];

    push(next: HandlerNotification): void {
      const at = this.entries.findIndex((entry) => entry.key === next.key);
      if (at === -1) {
        this.entries.push({ key: next.key, first: next, then: undefined });
        return;
      }
      const entry = this.entries[at]!;
      const first = entry.first;
      if (entry.then !== undefined) {
        entry.then = next.type === 'delete' ? undefined : { type: 'add', key: next.key, object: next.object, isInInitialList: (entry.then as { isInInitialList: boolean }).isInInitialList };
      } else if (first.type === 'add') {
        if (next.type === 'delete') this.entries.splice(at, 1);
        else entry.first = { type: 'add', key: next.key, object: next.object, isInInitialList: first.isInInitialList };
      } else if (first.type === 'update') {
        entry.first =
          next.type === 'delete'
            ? next
            : { type: 'update', key: next.key, oldObject: first.oldObject, object: next.object, isResync: first.isResync && next.type === 'update' && next.isResync };
      } else if (next.type !== 'delete') {
        entry.then = { type: 'add', key: next.key, object: next.object, isInInitialList: next.type === 'add' && next.isInInitialList };
      }
    }

    shift(): HandlerNotification | undefined {
      const entry = this.entries[0];
      if (entry === undefined) return undefined;
      if (entry.then === undefined) this.entries.shift();
      const first = entry.first;
      entry.first = entry.then!;
      entry.then = undefined;
      return first;
    }

    get size(): number {
      return this.entries.length;
    }

    owed(): HandlerNotification[] {
      return this.entries.map((entry) => entry.first);
    }
  }

  const operation = fc.oneof(
    fc.record({ op: fc.constant('push' as const), kind: fc.constantFrom('add', 'update', 'delete'), key: fc.integer({ min: 0, max: 5 }), resync: fc.boolean() }),
    fc.record({ op: fc.constant('shift' as const) }),
  );

  it('hands out exactly what the model does, in the same order, through folds and compactions, and owes the same', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 3000, size: 'max' }), (operations) => {
        const queue = new CoalescingQueue();
        const model = new ModelQueue();
        let version = 0;
        for (const step of operations) {
          if (step.op === 'shift') {
            expect(queue.shift()).toEqual(model.shift());
          } else {
            const name = `k${step.key}`;
            const rv = String(++version);
            const notification = step.kind === 'add' ? add(name, rv) : step.kind === 'update' ? update(name, String(version - 1), rv, step.resync) : del(name, rv);
            queue.push(notification);
            model.push(notification);
          }
          expect(queue.size).toBe(model.size);
          expect([...queue.owed()]).toEqual(model.owed());
        }
        expect(drain(queue)).toEqual(drain(model as unknown as CoalescingQueue));
      }),
      { numRuns: 25 },
    );
  });

  it('stays bounded when objects are created and deleted faster than they are delivered', () => {
    const queue = new CoalescingQueue();
    for (let i = 0; i < 50_000; i++) {
      queue.push(add(`churn-${i}`, '1'));
      queue.push(del(`churn-${i}`, '2'));
    }
    queue.push(add('kept', '1'));
    expect(queue.size).toBe(1);
    expect((queue as unknown as { line: unknown[] }).line.length).toBeLessThan(2 * 1024 + 2);
    expect(drain(queue)).toEqual([add('kept', '1')]);
  });
});
