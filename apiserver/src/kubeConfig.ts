import type * as ClientNode from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { testCertificates } from './tls';

/**
 * Loads `@kubernetes/client-node` with Node's own `require`. client-node 2.x is an ES module; Node
 * 22 can `require` it, but Jest's module registry cannot, so going through the real loader
 * (`process.getBuiltinModule`, which Jest does not intercept) makes it usable inside Jest too.
 */
export function loadClientNode(): typeof ClientNode {
  const nodeModule = loadNodeModule();
  try {
    return nodeModule.createRequire(__filename)('@kubernetes/client-node') as typeof ClientNode;
  } catch (error) {
    // client-node 1.x and 2.x are ES modules; Node can require() them only from 20.19 on.
    if ((error as { code?: unknown }).code === 'ERR_REQUIRE_ESM') {
      throw new Error(
        `rx-informer-apiserver needs Node >= 20.19 to load @kubernetes/client-node (an ES module) from CommonJS; this is Node ${process.version}`,
        { cause: error },
      );
    }
    // client-node 2.x depends on undici 8, which needs Node >= 22.19 and fails at import on older
    // Node with an unhelpful TypeError ("Cannot read properties of undefined (reading 'bind')").
    const version = clientNodeVersion(nodeModule);
    if (version !== undefined && Number.parseInt(version, 10) >= 2 && !nodeAtLeast(22, 19)) {
      throw new Error(
        `rx-informer-apiserver loads @kubernetes/client-node ${version}, which needs Node >= 22.19 (its HTTP client, undici 8, does); ` +
          `this is Node ${process.version}. Use Node >= 22.19, or @kubernetes/client-node 1.x on Node 20.`,
        { cause: error },
      );
    }
    throw error;
  }
}

/** `node:module` through the real loader: Jest's module registry cannot require ES modules. */
function loadNodeModule(): typeof import('node:module') {
  const getBuiltin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  return typeof getBuiltin === 'function' ? (getBuiltin('node:module') as typeof import('node:module')) : (require('node:module') as typeof import('node:module'));
}

/** The installed client-node's version, read from its package.json beside its entry point. */
function clientNodeVersion(nodeModule: typeof import('node:module')): string | undefined {
  try {
    const requireHere = nodeModule.createRequire(__filename);
    const entry = requireHere.resolve('@kubernetes/client-node');
    const root = entry.slice(0, entry.lastIndexOf('client-node') + 'client-node'.length);
    return (requireHere(`${root}/package.json`) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

function nodeAtLeast(major: number, minor: number): boolean {
  const [actualMajor = 0, actualMinor = 0] = process.versions.node.split('.').map(Number);
  return actualMajor > major || (actualMajor === major && actualMinor >= minor);
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
