import { StatusError, type Status } from '../../lib/base/errors';
import { ApplyConflictError, applyConflictsOf, ConflictError, writeErrorOf } from '../../lib/writes/writeErrors';

/**
 * How a failed write reads: the Status shapes of apimachinery's `NewApplyConflict` (through
 * managedfields' `NewConflictError`), `NewConflict`, `NewAlreadyExists`, and the generic 422 that
 * apiserver's patch handler answers a JSON Patch that does not apply.
 */

const status = (code: number, reason: string, message: string, details?: Status['details']): Status => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message,
  reason,
  ...(details === undefined ? {} : { details }),
  code,
});

const PATCH_DOES_NOT_APPLY = status(422, 'Invalid', 'the server rejected our request due to an error in our request', {});

describe('writeErrorOf', () => {
  it('makes a 409 that names field managers an ApplyConflictError', () => {
    const error = writeErrorOf(
      new StatusError(status(409, 'Conflict', 'Apply failed with 1 conflict: conflict with "kubectl": .data.a', { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl"', field: '.data.a' }] }), undefined, 'PATCH /x'),
      'apply',
    );
    expect(error).toBeInstanceOf(ApplyConflictError);
    expect(error.message).toBe('409 Conflict on PATCH /x: Apply failed with 1 conflict: conflict with "kubectl": .data.a');
  });

  it('makes any other 409 Conflict a ConflictError, and leaves 409 AlreadyExists alone', () => {
    expect(writeErrorOf(new StatusError(status(409, 'Conflict', 'Operation cannot be fulfilled on pods "p": the object has been modified')), 'merge-patch')).toBeInstanceOf(ConflictError);
    const exists = new StatusError(status(409, 'AlreadyExists', 'pods "p" already exists'));
    expect(writeErrorOf(exists, 'other')).toBe(exists);
  });

  it("makes the generic 422 a ConflictError for a JSON Patch only: a merge patch's 422, or one with causes, is validation", () => {
    expect(writeErrorOf(new StatusError(PATCH_DOES_NOT_APPLY), 'json-patch')).toBeInstanceOf(ConflictError);
    const forMerge = new StatusError(PATCH_DOES_NOT_APPLY);
    expect(writeErrorOf(forMerge, 'merge-patch')).toBe(forMerge);
    const invalid = new StatusError(status(422, 'Invalid', 'Pod "p" is invalid: metadata.labels: Invalid value', { causes: [{ reason: 'FieldValueInvalid', field: 'metadata.labels' }] }));
    expect(writeErrorOf(invalid, 'json-patch')).toBe(invalid);
  });

  it('keeps the request, the code and the retry hint', () => {
    const error = writeErrorOf(new StatusError(status(409, 'Conflict', 'stale'), 3, 'PATCH /api/v1/namespaces/a/pods/b'), 'json-patch');
    expect([error.code, error.retryAfterSeconds, error.request]).toEqual([409, 3, 'PATCH /api/v1/namespaces/a/pods/b']);
  });
});

describe('applyConflictsOf', () => {
  it('reads managers quoted with Go escapes, and keeps a message of another shape whole as the manager', () => {
    const conflicts = applyConflictsOf(
      status(409, 'Conflict', 'Apply failed with 2 conflicts', {
        causes: [
          { reason: 'FieldManagerConflict', message: 'conflict with "team \\"a\\""', field: '.spec.x' },
          { reason: 'FieldManagerConflict', message: 'a conflict worded otherwise', field: '.spec.y' },
          { reason: 'FieldValueInvalid', message: 'not a conflict', field: '.spec.z' },
        ],
      }),
    );
    expect(conflicts.map(({ manager, field }) => [manager, field])).toEqual([
      ['team "a"', '.spec.x'],
      ['a conflict worded otherwise', '.spec.y'],
    ]);
  });
});
