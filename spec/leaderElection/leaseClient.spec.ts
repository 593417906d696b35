import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { asyncScheduler, firstValueFrom, lastValueFrom } from 'rxjs';
import { kubeLeaseClient, type LeaseClient } from '../../lib/leaderElection/leaseClient';
import { leases, type Lease } from '../../lib/resources/builtins';
import { NetworkError, StatusError } from '../../lib/base/errors';
import { createClusterStore, startApiServer, storeLeaseClient, type ApiServer, type ClusterStore } from '../../apiserver/src';
import { loopbackKubeConfig } from '../../apiserver/src/kubeConfig';
import { EVENTUALLY_MS, within } from '../support/eventually';

/**
 * One contract, two clients: the HTTP client against the loopback server, and the in-memory
 * double the virtual-time specs use. Both must give the same answers, or the specs prove nothing.
 */

function lease(name: string, holder: string, resourceVersion?: string): Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: 'default', ...(resourceVersion === undefined ? {} : { resourceVersion }) },
    spec: { holderIdentity: holder, leaseDurationSeconds: 15 },
  };
}

async function failure(request: Promise<unknown>): Promise<{ code: number; reason: string; message: string | undefined }> {
  try {
    await request;
  } catch (error) {
    if (!(error instanceof StatusError)) throw error;
    return { code: error.code, reason: error.reason, message: error.status.message };
  }
  throw new Error('the request succeeded');
}

interface Fixture {
  readonly client: LeaseClient;
  readonly store: ClusterStore;
  close(): Promise<void>;
}

const fixtures: [string, () => Promise<Fixture>][] = [
  [
    'over HTTP against the loopback server',
    async () => {
      const server: ApiServer = await startApiServer();
      return { client: kubeLeaseClient(server.kubeConfig), store: server.store, close: () => server.close() };
    },
  ],
  [
    'in memory (storeLeaseClient)',
    async () => {
      const store = createClusterStore();
      return { client: storeLeaseClient(store, { scheduler: asyncScheduler, latency: 2 }), store, close: async () => undefined };
    },
  ],
];

describe.each(fixtures)('LeaseClient %s', (_name, setup) => {
  let fixture: Fixture;
  beforeEach(async () => {
    fixture = await setup();
  });
  afterEach(() => fixture.close());

  it('creates, reads and updates with optimistic concurrency; a stale version gets 409 Conflict and changes nothing', async () => {
    const { client, store } = fixture;
    const created = await firstValueFrom(client.create(lease('lock', 'a')));
    expect(created.metadata.resourceVersion).toEqual(expect.any(String));
    const read = await firstValueFrom(client.get('default', 'lock'));
    expect(read.spec?.holderIdentity).toBe('a');
    const updated = await firstValueFrom(client.update({ ...read, spec: { ...read.spec, holderIdentity: 'b' } }));
    expect(updated.metadata.resourceVersion).not.toBe(read.metadata.resourceVersion);
    expect(await failure(firstValueFrom(client.update({ ...read, spec: { holderIdentity: 'c' } })))).toEqual({
      code: 409,
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on leases.coordination.k8s.io "lock": the object has been modified; please apply your changes to the latest version and try again',
    });
    expect(store.get(leases, 'default', 'lock')?.spec?.holderIdentity).toBe('b');
  });

  it('answers 409 AlreadyExists, 404 NotFound and 422 for an update without a resourceVersion', async () => {
    const { client } = fixture;
    await firstValueFrom(client.create(lease('lock', 'a')));
    expect(await failure(firstValueFrom(client.create(lease('lock', 'b'))))).toEqual({ code: 409, reason: 'AlreadyExists', message: 'leases.coordination.k8s.io "lock" already exists' });
    expect(await failure(firstValueFrom(client.get('default', 'nope')))).toEqual({ code: 404, reason: 'NotFound', message: 'leases.coordination.k8s.io "nope" not found' });
    expect(await failure(firstValueFrom(client.update(lease('lock', 'b'))))).toEqual({
      code: 422,
      reason: 'Invalid',
      message: 'leases.coordination.k8s.io "lock" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update',
    });
  });

  it('creates on an update of a missing name', async () => {
    const { client, store } = fixture;
    const created = await lastValueFrom(client.update(lease('fresh', 'a', '999')));
    expect(created.spec?.holderIdentity).toBe('a');
    expect(store.get(leases, 'default', 'fresh')?.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });
});

describe('kubeLeaseClient', () => {
  it('fails with a NetworkError when nothing listens', async () => {
    const server = await startApiServer();
    const url = server.url;
    await server.close();
    const client = kubeLeaseClient(loopbackKubeConfig({ url, tls: false, token: undefined }));
    await expect(firstValueFrom(client.get('default', 'lock'))).rejects.toBeInstanceOf(NetworkError);
  });

  it('aborts the request when unsubscribed before the answer', async () => {
    // A server that never answers: the client's unsubscription must close the connection.
    let requests = 0;
    const raw = http.createServer(() => void requests++);
    const closed = new Promise<void>((resolve) => {
      raw.once('request', (request: http.IncomingMessage) => request.socket.once('close', () => resolve()));
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = raw.address() as AddressInfo;
      const client = kubeLeaseClient(loopbackKubeConfig({ url: `http://127.0.0.1:${port}`, tls: false, token: undefined }));
      const arrived = new Promise<void>((resolve) => raw.once('request', () => resolve()));
      const subscription = client.get('default', 'lock').subscribe({ error: () => undefined });
      await within(arrived, EVENTUALLY_MS, 'the GET of the lease to reach the server');
      subscription.unsubscribe();
      await within(closed, EVENTUALLY_MS, 'the unsubscribed request’s connection to close');
      expect(requests).toBe(1); // closed, not answered by a retry
    } finally {
      await new Promise<void>((resolve) => raw.close(() => resolve()));
    }
  });
});
