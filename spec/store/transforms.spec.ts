import type { KubeObject } from '../../lib/base/object';
import { dropManagedFields } from '../../lib/store/transforms';

const pod = (metadata: Partial<KubeObject['metadata']>, rest: Record<string, unknown> = {}): KubeObject =>
  ({ metadata: { name: 'p', ...metadata }, ...rest }) as KubeObject;

describe('dropManagedFields', () => {
  it('removes metadata.managedFields without mutating the input', () => {
    const input = pod({ managedFields: [{ manager: 'kubectl' }], labels: { a: 'b' } }, { spec: { x: 1 } });
    const output = dropManagedFields(input);
    expect(output.metadata).toEqual({ name: 'p', labels: { a: 'b' } });
    expect(output).toMatchObject({ spec: { x: 1 } });
    expect(input.metadata.managedFields).toHaveLength(1);
  });

  it('returns the same object when there is nothing to drop', () => {
    const input = pod({});
    expect(dropManagedFields(input)).toBe(input);
  });
});
