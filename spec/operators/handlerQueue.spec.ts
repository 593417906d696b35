import { CoalescingQueue, type HandlerNotification } from '../../lib/operators/handlerQueue';
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
  const queue = new CoalescingQueue(100);
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
    const queue = new CoalescingQueue(100);
    queue.push(add('a', '0'));
    for (let i = 1; i <= 10_000; i++) queue.push(update('a', String(i - 1), String(i)));
    expect(queue.size).toBe(1);
  });

  it('evicts the oldest entry when a new key would exceed maxPending', () => {
    const queue = new CoalescingQueue(2);
    expect(queue.push(add('a', '1'))).toBeUndefined();
    expect(queue.push(add('b', '1'))).toBeUndefined();
    expect(queue.push(update('b', '1', '2'))).toBeUndefined();
    expect(queue.push(add('c', '1'))).toEqual(add('a', '1'));
    expect(drain(queue)).toEqual([add('b', '2'), add('c', '1')]);
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
