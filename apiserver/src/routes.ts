import type { ServedResource } from './builtinResources';
import { coreVersionsDocument, groupDocument, groupListDocument, resourceListDocument } from './discovery';

/** Maps URL paths to what they name (PROTOCOL.md B.1). */

/** What a path names. */
export type Route =
  /** `public`: readable without credentials, as `system:public-info-viewer` allows for /version. */
  | {
      readonly kind: 'discovery';
      readonly document: unknown;
      readonly public?: boolean;
      /** `/api` and `/apis` also serve aggregated discovery (`discoveryHandler.ts`). */
      readonly aggregated?: 'api' | 'apis';
    }
  | { readonly kind: 'health' }
  | {
      readonly kind: 'resource';
      readonly served: ServedResource;
      /** Set for `/namespaces/NS/...` paths. */
      readonly namespace: string | undefined;
      readonly name: string | undefined;
      readonly subresource: string | undefined;
    }
  | { readonly kind: 'unknown' };

const UNKNOWN: Route = { kind: 'unknown' };

function decodeSegments(path: string): string[] | undefined {
  try {
    return path
      .split('/')
      .filter((s) => s !== '')
      .map((s) => decodeURIComponent(s));
  } catch {
    return undefined;
  }
}

function resourceRoute(served: readonly ServedResource[], group: string, version: string, rest: readonly string[]): Route {
  const find = (plural: string | undefined): ServedResource | undefined =>
    served.find((s) => s.resource.group === group && s.resource.version === version && s.resource.plural === plural);
  // `/namespaces/NS/<plural>[/name[/sub]]`; `/namespaces/NS[/sub]` is the Namespace object itself.
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const found = find(rest[2]);
    if (found !== undefined) {
      if (!found.resource.namespaced || rest.length > 5) return UNKNOWN;
      return { kind: 'resource', served: found, namespace: rest[1], name: rest[3], subresource: rest[4] };
    }
  }
  const found = find(rest[0]);
  if (found === undefined || rest.length > 3) return UNKNOWN;
  return { kind: 'resource', served: found, namespace: undefined, name: rest[1], subresource: rest[2] };
}

/** Resolves a request path against the served resources; `/version` answers `version`. */
export function route(path: string, served: readonly ServedResource[], version: unknown): Route {
  const segments = decodeSegments(path);
  if (segments === undefined) return UNKNOWN;
  const [first, second, third] = segments;
  if (segments.length === 1 && first === 'version') return { kind: 'discovery', document: version, public: true };
  if (segments.length === 1 && (first === 'healthz' || first === 'livez' || first === 'readyz')) return { kind: 'health' };
  if (first === 'api') {
    if (segments.length === 1) return { kind: 'discovery', document: coreVersionsDocument(), aggregated: 'api' };
    if (second === undefined) return UNKNOWN;
    if (segments.length === 2) {
      const document = resourceListDocument(served, '', second);
      return document === undefined ? UNKNOWN : { kind: 'discovery', document };
    }
    return resourceRoute(served, '', second, segments.slice(2));
  }
  if (first === 'apis') {
    if (segments.length === 1) return { kind: 'discovery', document: groupListDocument(served), aggregated: 'apis' };
    if (second === undefined) return UNKNOWN;
    if (segments.length === 2) {
      const document = groupDocument(served, second);
      return document === undefined ? UNKNOWN : { kind: 'discovery', document };
    }
    if (third === undefined) return UNKNOWN;
    if (segments.length === 3) {
      const document = resourceListDocument(served, second, third);
      return document === undefined ? UNKNOWN : { kind: 'discovery', document };
    }
    return resourceRoute(served, second, third, segments.slice(3));
  }
  return UNKNOWN;
}
