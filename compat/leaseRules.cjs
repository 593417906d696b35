'use strict';
/*
 * The Lease rules of the packed loopback server, as the real API server answers them, for
 * compat/loadEntries.cjs (the CommonJS build, through require) and compat/loadEntries.mjs (the ES
 * module build, through import): each gets `startApiServer` from its own loader and passes it here.
 *
 * What the API server answers, from the Kubernetes sources:
 * - kubernetes `pkg/registry/coordination/lease/strategy.go`: `AllowCreateOnUpdate()` is true and
 *   `AllowUnconditionalUpdate()` is false for Leases;
 * - apiserver `staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go`, `Store.Update`:
 *   a missing object (`existingResourceVersion == 0`) under `AllowCreateOnUpdate` goes the create
 *   flow (201 Created); an update whose object has no resourceVersion, the strategy refusing
 *   unconditional updates, is `NewInvalid` (422) on `metadata.resourceVersion`, "must be specified
 *   for an update", with the resource as the kind; a resourceVersion other than the stored one is
 *   `NewConflict` (409) with `OptimisticLockErrorMsg`.
 *
 * Returns one `{ name, ok, detail }` per rule.
 */
const PATH = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
const CONFLICT = 'Operation cannot be fulfilled on leases.coordination.k8s.io "lock": the object has been modified; please apply your changes to the latest version and try again';
const INVALID = 'leases.coordination.k8s.io "lock" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update';

function lease(name, holderIdentity, resourceVersion) {
  const metadata = resourceVersion === undefined ? { name, namespace: 'default' } : { name, namespace: 'default', resourceVersion };
  return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec: { holderIdentity, leaseDurationSeconds: 15 } };
}

async function send(server, method, path, body) {
  const response = await fetch(`${server.url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, json: await response.json() };
}

function rule(name, answer, status, reason, message) {
  const problems = [];
  if (answer.status !== status) problems.push(`status ${answer.status}, expected ${status}`);
  if (reason !== undefined && answer.json.reason !== reason) problems.push(`reason ${answer.json.reason}, expected ${reason}`);
  if (message !== undefined && answer.json.message !== message) problems.push(`message "${answer.json.message}", expected "${message}"`);
  return { name, ok: problems.length === 0, detail: problems.join('; ') };
}

async function checkLeaseRules(startApiServer) {
  const server = await startApiServer();
  try {
    const created = await send(server, 'POST', PATH, lease('lock', 'a'));
    if (created.status !== 201) return [{ name: 'a Lease is created (POST, 201)', ok: false, detail: `status ${created.status}` }];
    const read = created.json;
    const results = [];
    const blind = await send(server, 'PUT', `${PATH}/lock`, lease('lock', 'b'));
    results.push(rule('Lease update without a resourceVersion: 422 Invalid (AllowUnconditionalUpdate false)', blind, 422, 'Invalid', INVALID));
    const renewed = await send(server, 'PUT', `${PATH}/lock`, { ...read, spec: { ...read.spec, holderIdentity: 'b' } });
    results.push(rule('Lease update at the resourceVersion read: 200', renewed, 200));
    const stale = await send(server, 'PUT', `${PATH}/lock`, { ...read, spec: { ...read.spec, holderIdentity: 'c' } });
    results.push(rule('Lease update at a stale resourceVersion: 409 Conflict', stale, 409, 'Conflict', CONFLICT));
    const missing = await send(server, 'PUT', `${PATH}/fresh`, lease('fresh', 'a'));
    results.push(rule('PUT of a missing Lease: 201 created (AllowCreateOnUpdate true)', missing, 201));
    return results;
  } finally {
    await server.close();
  }
}

module.exports = { checkLeaseRules };
