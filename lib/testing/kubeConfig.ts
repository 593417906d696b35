import type { KubeConfig } from '@kubernetes/client-node';
import { testCertificates } from './tls';

/**
 * Loads `@kubernetes/client-node` with Node's own `require`. client-node 2.x is an ES module; Node
 * 22 can `require` it, but Jest's module registry cannot, so going through the real loader
 * (`process.getBuiltinModule`, which Jest does not intercept) makes it usable inside Jest too.
 */
export function loadClientNode(): typeof import('@kubernetes/client-node') {
  try {
    return requireClientNode();
  } catch (error) {
    // client-node 1.x and 2.x are ES modules; Node can require() them only from 20.19 on.
    if ((error as { code?: unknown }).code === 'ERR_REQUIRE_ESM') {
      throw new Error(
        `rx-informer/testing needs Node >= 20.19 to load @kubernetes/client-node (an ES module) from CommonJS; this is Node ${process.version}`,
        { cause: error },
      );
    }
    throw error;
  }
}

function requireClientNode(): typeof import('@kubernetes/client-node') {
  const getBuiltin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  if (typeof getBuiltin === 'function') {
    const nodeModule = getBuiltin('node:module') as typeof import('node:module');
    return nodeModule.createRequire(__filename)('@kubernetes/client-node') as typeof import('@kubernetes/client-node');
  }
  return require('@kubernetes/client-node') as typeof import('@kubernetes/client-node');
}

/** What a loopback kubeconfig points at. */
export interface LoopbackKubeConfigOptions {
  readonly url: string;
  readonly tls: boolean;
  readonly token: string | undefined;
}

/**
 * A ready KubeConfig for a loopback server: one cluster (with the test CA when TLS), one user (with
 * the bearer token when the server wants one), one current context named `loopback`.
 */
export function loopbackKubeConfig(options: LoopbackKubeConfigOptions): KubeConfig {
  const { KubeConfig: KubeConfigClass } = loadClientNode();
  const kubeConfig = new KubeConfigClass();
  kubeConfig.loadFromOptions({
    clusters: [
      {
        name: 'loopback',
        server: options.url,
        // client-node 2.x refuses plain http unless skipTLSVerify is set; over TLS the CA is verified.
        skipTLSVerify: !options.tls,
        ...(options.tls ? { caData: Buffer.from(testCertificates.caCert).toString('base64') } : {}),
      },
    ],
    users: [{ name: 'loopback', ...(options.token === undefined ? {} : { token: options.token }) }],
    contexts: [{ name: 'loopback', cluster: 'loopback', user: 'loopback' }],
    currentContext: 'loopback',
  });
  return kubeConfig;
}
