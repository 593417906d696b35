import { applications, makeApplication } from '../../apiserver/src/applications';
import { seededRandom } from '../../apiserver/src/random';
import { startApiServer } from '../../apiserver/src/server';

describe('makeApplication', () => {
  it('is deterministic for a seed, and differs between seeds', () => {
    const a = makeApplication(seededRandom(3), 'ns-0', 'checkout');
    expect(makeApplication(seededRandom(3), 'ns-0', 'checkout')).toEqual(a);
    expect(makeApplication(seededRandom(4), 'ns-0', 'checkout')).not.toEqual(a);
  });

  it('makes custom resources of about 20 KB of JSON, with the shape of an Argo CD Application', () => {
    const random = seededRandom(1);
    const sizes = Array.from({ length: 50 }, (_, i) => Buffer.byteLength(JSON.stringify(makeApplication(random, `ns-${i % 3}`, `app-${i}`))));
    for (const size of sizes) {
      expect(size).toBeGreaterThan(18_000);
      expect(size).toBeLessThan(24_000);
    }
    const app = makeApplication(seededRandom(9), 'team-a', 'search');
    expect(app).toMatchObject({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { namespace: 'team-a', name: 'search' } });
    expect(app.status.resources).toHaveLength(60);
    expect(app.status.history.at(-1)?.revision).toBe(app.status.sync.revision);
    // The summary agrees with the list it summarises.
    expect(app.status.sync.status).toBe(app.status.resources.every((resource) => resource.status === 'Synced') ? 'Synced' : 'OutOfSync');
  });

  it('is served by the loopback server as a custom resource', async () => {
    const server = await startApiServer({ resources: [applications] });
    try {
      const random = seededRandom(5);
      for (let i = 0; i < 3; i++) server.store.create(applications, makeApplication(random, 'ns-0', `app-${i}`));
      const response = await fetch(`${server.url}/apis/argoproj.io/v1alpha1/applications`);
      const list = (await response.json()) as { kind: string; items: { metadata: { name: string } }[] };
      expect(response.status).toBe(200);
      expect(list.kind).toBe('ApplicationList');
      expect(list.items.map((item) => item.metadata.name)).toEqual(['app-0', 'app-1', 'app-2']);
    } finally {
      await server.close();
    }
  });
});
