import type { KubeConfig } from '@kubernetes/client-node';
import { NetworkError } from '../../lib/base/errors';
import { loadClientNode, startApiServer, testCertificates, type ApiServer } from '../../apiserver/src';
import { waitForSync } from '../../lib/informer/waitForSync';
import { runInformer, type RunningInformer } from '../badInput/rawApiServer';
import { describeEachServerVersion } from '../support/serverVersions';

type ClusterOptions = { caData?: string; skipTLSVerify?: boolean };

function kubeConfigFor(url: string, cluster: ClusterOptions): KubeConfig {
  const { KubeConfig: KubeConfigClass } = loadClientNode();
  const kubeConfig = new KubeConfigClass();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: cluster.skipTLSVerify ?? false, ...(cluster.caData === undefined ? {} : { caData: cluster.caData }) }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kubeConfig;
}

const base64 = (pem: string) => Buffer.from(pem).toString('base64');

describeEachServerVersion('security: TLS verification stays on unless the kubeconfig turns it off', (serverVersion) => {
  let server: ApiServer | undefined;
  let running: RunningInformer | undefined;
  afterEach(async () => {
    running?.stop();
    running = undefined;
    await server?.close();
    server = undefined;
  });

  async function outcome(kubeConfig: KubeConfig): Promise<unknown> {
    running = runInformer(kubeConfig);
    return waitForSync([running.informer], { timeout: 1000 }).then(
      (snapshots) => snapshots[0],
      (error: unknown) => error,
    );
  }

  it('rejects a server whose certificate the system trust store does not vouch for (no CA in the kubeconfig)', async () => {
    server = await startApiServer({ serverVersion, tls: true });
    const result = await outcome(kubeConfigFor(server.url, {}));
    expect(result).toBeInstanceOf(NetworkError);
    expect((result as NetworkError).message).toMatch(/certificate/i);
    expect(server.requests.entries).toHaveLength(0);
  });

  it('rejects a server certificate not signed by the CA the kubeconfig names', async () => {
    server = await startApiServer({ serverVersion, tls: true });
    // A leaf certificate is no CA: nothing it "signs" can be trusted.
    const result = await outcome(kubeConfigFor(server.url, { caData: base64(testCertificates.clientCert) }));
    expect(result).toBeInstanceOf(NetworkError);
    expect(server.requests.entries).toHaveLength(0);
  });

  it('rejects a certificate issued for another host name, even from the right CA', async () => {
    // The test certificate covers 127.0.0.1, ::1 and localhost; 127.0.0.2 is loopback too, but not named in it.
    server = await startApiServer({ serverVersion, tls: true, host: '127.0.0.2' });
    const result = await outcome(kubeConfigFor(server.url, { caData: base64(testCertificates.caCert) }));
    expect(result).toBeInstanceOf(NetworkError);
    expect((result as NetworkError).message).toMatch(/altnames|host|IP/i);
    expect(server.requests.entries).toHaveLength(0);
  });

  it('syncs with the CA the kubeconfig names', async () => {
    server = await startApiServer({ serverVersion, tls: true });
    server.store.create({ group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true }, { metadata: { name: 'a', namespace: 'default' } });
    const result = await outcome(kubeConfigFor(server.url, { caData: base64(testCertificates.caCert) }));
    expect(result).not.toBeInstanceOf(Error);
    expect((result as { size: number }).size).toBe(1);
  });

  it('skips verification only when the kubeconfig says insecure-skip-tls-verify', async () => {
    server = await startApiServer({ serverVersion, tls: true });
    const result = await outcome(kubeConfigFor(server.url, { skipTLSVerify: true }));
    expect(result).not.toBeInstanceOf(Error);
    expect((result as { synced: boolean }).synced).toBe(true);
  });
});
