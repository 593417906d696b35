import { silentLogger } from '../../lib/base/logger';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Subscription } from 'rxjs';
import { parseAllDocuments } from 'yaml';
import { crdToTypeScript } from '../../lib/crd/crdToTypeScript';
import { fetchCustomResourceDefinition } from '../../lib/crd/fetchCustomResourceDefinition';
import { informer } from '../../lib/informer/informer';
import { waitForSync } from '../../lib/informer/waitForSync';
import { customResourceDefinitions, type CustomResourceDefinition } from '../../lib/resources/builtins';
import type { Snapshot } from '../../lib/store/snapshot';
import { StatusError } from '../../lib/base/errors';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { eventually } from '../support/eventually';
import { certificatesV1, type CertificateV1, type CertificateV1StatusConditions } from '../crd/generated/cert-manager-certificates';
import { compositionsV1, type CompositionV1 } from '../crd/generated/crossplane-compositions';
import { httproutesV1, type HTTPRouteV1 } from '../crd/generated/gateway-api-httproutes';
import { gatewaysV1beta1, type GatewayV1beta1 } from '../crd/generated/istio-gateways';

/**
 * The generated types at work: informers over custom resources described by the checked-in output
 * of `rx-informer crd`, against the loopback API server, and the CRDs themselves read from it.
 */

const backoff = { initialMs: 10, maxMs: 50 };
const FIXTURES = path.join(__dirname, '..', 'crd', 'fixtures');
const GENERATED = path.join(__dirname, '..', 'crd', 'generated');

function fixture(name: string): CustomResourceDefinition {
  const [document] = parseAllDocuments(readFileSync(path.join(FIXTURES, `${name}.yaml`), 'utf8'));
  return document!.toJS() as CustomResourceDefinition;
}

function certificate(name: string, dnsNames: readonly string[]): CertificateV1 {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { namespace: 'default', name },
    spec: { secretName: `${name}-tls`, issuerRef: { name: 'letsencrypt', kind: 'ClusterIssuer' }, dnsNames, privateKey: { algorithm: 'ECDSA', size: 256 } },
  };
}

describe('custom resources typed by rx-informer crd, over HTTP', () => {
  let server: ApiServer;
  const subscriptions: Subscription[] = [];
  const keep = (subscription: Subscription): Subscription => (subscriptions.push(subscription), subscription);

  beforeEach(async () => {
    server = await startApiServer({ resources: [certificatesV1, compositionsV1, httproutesV1, gatewaysV1beta1, customResourceDefinitions] });
  });
  afterEach(async () => {
    subscriptions.splice(0).forEach((s) => s.unsubscribe());
    await server.close();
  });

  it('caches Certificates as CertificateV1, with the status conditions of the list-map as the watch brings them', async () => {
    server.store.create(certificatesV1, certificate('web', ['web.example.com']));
    server.store.create(certificatesV1, certificate('api', ['api.example.com', 'api.internal']));
    const certificates = informer(server.kubeConfig, certificatesV1, { backoff, logger: silentLogger });
    let latest: Snapshot<CertificateV1> | undefined;
    keep(certificates.informer$.subscribe((snapshot) => (latest = snapshot)));
    const [synced] = await waitForSync([certificates], { timeout: 10_000 });
    const web: CertificateV1 | undefined = synced.get('default/web');
    expect(web?.spec?.dnsNames).toEqual(['web.example.com']);
    expect(web?.spec?.privateKey?.algorithm).toBe('ECDSA');
    expect(web?.apiVersion).toBe('cert-manager.io/v1');

    const ready: CertificateV1StatusConditions = { type: 'Ready', status: 'True', reason: 'Issued', lastTransitionTime: '2026-12-04T10:00:00Z' };
    server.store.update(certificatesV1, { ...web!, status: { conditions: [ready], notAfter: '2027-03-04T10:00:00Z' } });
    const issued = await eventually(() => {
      const conditions = latest?.get('default/web')?.status?.conditions;
      expect(conditions).toBeDefined();
      return conditions!;
    });
    expect(issued.find((condition) => condition.type === 'Ready')?.status).toBe('True');
    expect(latest?.get('default/web')?.status?.notAfter).toBe('2027-03-04T10:00:00Z');
  });

  it('keeps the open fields of an embedded resource through the server and the cache (a cluster-scoped Composition)', async () => {
    const composition: CompositionV1 = {
      apiVersion: 'apiextensions.crossplane.io/v1',
      kind: 'Composition',
      metadata: { name: 'xbuckets' },
      spec: {
        compositeTypeRef: { apiVersion: 'example.org/v1', kind: 'XBucket' },
        mode: 'Pipeline',
        pipeline: [{ step: 'patch', functionRef: { name: 'function-patch-and-transform' }, input: { apiVersion: 'pt.fn.crossplane.io/v1beta1', kind: 'Resources', resources: [{ name: 'bucket' }] } }],
      },
    };
    server.store.create(compositionsV1, composition);
    const compositions = informer(server.kubeConfig, compositionsV1, { backoff, logger: silentLogger });
    const [synced] = await waitForSync([compositions], { timeout: 10_000 });
    const input = synced.get('xbuckets')?.spec?.pipeline?.[0]?.input;
    expect(input?.kind).toBe('Resources');
    expect(input?.['resources']).toEqual([{ name: 'bucket' }]);
  });

  it('watches HTTPRoutes over a set of namespaces, typed', async () => {
    const route = (namespace: string, name: string): HTTPRouteV1 => ({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { namespace, name },
      spec: { parentRefs: [{ name: 'gateway' }], hostnames: [`${name}.example.com`], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ name, port: 8080 }] }] },
    });
    for (const namespace of ['a', 'b', 'c']) server.store.create(httproutesV1, route(namespace, `shop-${namespace}`));
    const routes = informer(server.kubeConfig, httproutesV1, { namespaces: ['a', 'c'], backoff, logger: silentLogger });
    const [synced] = await waitForSync([routes], { timeout: 10_000 });
    expect([...synced.keys()].sort()).toEqual(['a/shop-a', 'c/shop-c']);
    expect(synced.get('c/shop-c')?.spec?.rules?.[0]?.backendRefs?.[0]?.port).toBe(8080);
  });

  it('carries a nullable field set to null (an Istio Gateway, one of three served versions)', async () => {
    const gateway: GatewayV1beta1 = {
      apiVersion: 'networking.istio.io/v1beta1',
      kind: 'Gateway',
      metadata: { namespace: 'default', name: 'ingress' },
      spec: { selector: { istio: 'ingressgateway' }, servers: [{ port: { number: 443, name: 'https', protocol: 'HTTPS' }, hosts: ['*'], tls: { mode: 'SIMPLE', insecureSkipVerify: null } }] },
    };
    server.store.create(gatewaysV1beta1, gateway);
    const gateways = informer(server.kubeConfig, gatewaysV1beta1, { backoff, logger: silentLogger });
    const [synced] = await waitForSync([gateways], { timeout: 10_000 });
    expect(synced.get('default/ingress')?.spec?.servers?.[0]?.tls).toEqual({ mode: 'SIMPLE', insecureSkipVerify: null });
  });

  it("reads a CRD from the cluster with the library's transport, and generates from it what it generates from the file", async () => {
    server.store.create(customResourceDefinitions, fixture('cert-manager-certificates'));
    const fetched = await fetchCustomResourceDefinition(server.kubeConfig, 'certificates.cert-manager.io');
    expect(crdToTypeScript([fetched])).toBe(readFileSync(path.join(GENERATED, 'cert-manager-certificates.ts'), 'utf8'));
  });

  it('names the request when the CRD is not there', async () => {
    const failure = await fetchCustomResourceDefinition(server.kubeConfig, 'missing.example.com').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StatusError);
    expect((failure as StatusError).code).toBe(404);
    expect((failure as StatusError).message).toContain('GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/missing.example.com');
  });
});
