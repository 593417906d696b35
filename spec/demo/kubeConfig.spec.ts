import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadClientNode } from '../../apiserver/src';
import { loadKubeConfig } from '../../demo/kubeConfig';

const { KubeConfig } = loadClientNode();

const twoContexts = {
  apiVersion: 'v1',
  kind: 'Config',
  clusters: [
    { name: 'dev', cluster: { server: 'https://dev.example:6443' } },
    { name: 'prod', cluster: { server: 'https://prod.example:6443' } },
  ],
  users: [{ name: 'me', user: { token: 'not-a-real-token' } }],
  contexts: [
    { name: 'dev', context: { cluster: 'dev', user: 'me' } },
    { name: 'prod', context: { cluster: 'prod', user: 'me' } },
  ],
  'current-context': 'dev',
};

describe('loadKubeConfig', () => {
  let dir: string;
  const file = (name: string, content: object): string => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(content));
    return path;
  };
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rx-informer-demo-kc-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('uses the current context of the file, or the one --context names', () => {
    const path = file('two.json', twoContexts);
    expect(loadKubeConfig(new KubeConfig(), { kubeconfig: path, context: undefined }).getCurrentCluster()?.server).toBe('https://dev.example:6443');
    expect(loadKubeConfig(new KubeConfig(), { kubeconfig: path, context: 'prod' }).getCurrentCluster()?.server).toBe('https://prod.example:6443');
  });

  it('names the contexts there are when --context names none', () => {
    const path = file('two.json', twoContexts);
    expect(() => loadKubeConfig(new KubeConfig(), { kubeconfig: path, context: 'staging' })).toThrow('no context "staging" in the kubeconfig (it has: dev, prod)');
  });

  it('says which file it cannot read', () => {
    const missing = join(dir, 'missing');
    expect(() => loadKubeConfig(new KubeConfig(), { kubeconfig: missing, context: undefined })).toThrow(`cannot read the kubeconfig ${missing}: `);
  });

  it('asks for --context when the file has no current context', () => {
    const path = file('none.json', { ...twoContexts, 'current-context': '' });
    expect(() => loadKubeConfig(new KubeConfig(), { kubeconfig: path, context: undefined })).toThrow('the kubeconfig has no current context with a cluster; pass --context NAME');
  });
});
