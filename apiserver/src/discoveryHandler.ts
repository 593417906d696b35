import { createHash } from 'node:crypto';
import type * as http from 'node:http';
import type { ServedResource } from './builtinResources';
import { aggregatedDiscoveryDocument } from './discovery';
import { notAcceptable } from './mediaTypeConversion';
import { sendJson, sendStatus } from './respond';
import type { AggregatedDiscoveryVersion, ServerProfile } from './serverVersion';

/**
 * Answers a discovery request, negotiating `/api` and `/apis` between the aggregated and the
 * unaggregated documents as the API server does (apiserver `endpoints/discovery/aggregated`):
 *
 * 1. `wrapper.go`: the `Accept` clauses are tried by quality, ties in the order given; the first
 *    acceptable one wins. A clause with `g`, `v` and `as` parameters is acceptable only when it
 *    asks for `apidiscovery.k8s.io` `APIGroupDiscoveryList` in a version the server serves
 *    (`negotiation.go`, `IsAggregatedDiscoveryGVK`; the versions by Kubernetes version in
 *    `ServerProfile.aggregatedDiscovery`), in JSON: it gets the aggregated document. A plain clause
 *    gets the unaggregated one; no clause at all is plain JSON.
 * 2. The aggregated answer's `Content-Type` carries the kind asked for
 *    (`application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`), which is how
 *    client-go tells the formats apart (`discovery_client.go`, `ContentTypeIsGVK`), with an `ETag`
 *    (the SHA-512 of the document's JSON, hex, quoted), `Vary: Accept` and `Cache-Control: public`;
 *    a request whose `If-None-Match` is that ETag gets 304 Not Modified (`aggregated/etag.go`).
 * 3. No acceptable clause: 406 NotAcceptable.
 *
 * The loopback server writes JSON whatever JSON-compatible type won (it speaks no protobuf).
 */

/** The path of a discovery document, and where aggregated discovery applies. */
export interface DiscoveryTarget {
  /** The unaggregated document. */
  readonly document: unknown;
  /** `/api` or `/apis`: the two paths that also serve aggregated discovery. */
  readonly aggregated?: 'api' | 'apis';
}

/** What a request asks for: `legacy` for the unaggregated document, else the aggregated version. */
export type DiscoveryForm = 'legacy' | AggregatedDiscoveryVersion | 'notAcceptable';

/** The media types the API server serves discovery in (its codec factory's), and the wildcards. */
const PLAIN_TYPES = new Set(['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'application/*', '*/*']);

interface Clause {
  readonly mediaType: string;
  readonly parameters: ReadonlyMap<string, string>;
  readonly quality: number;
}

function clausesOf(accept: string): Clause[] {
  const clauses = accept.split(',').flatMap((text): Clause[] => {
    const [mediaType = '', ...rest] = text.split(';').map((part) => part.trim());
    if (!mediaType.includes('/')) return [];
    const parameters = new Map<string, string>();
    for (const parameter of rest) {
      const equals = parameter.indexOf('=');
      if (equals > 0) parameters.set(parameter.slice(0, equals).trim(), parameter.slice(equals + 1).trim());
    }
    const quality = Number(parameters.get('q') ?? '1');
    parameters.delete('q');
    return [{ mediaType: mediaType.toLowerCase(), parameters, quality: Number.isNaN(quality) ? 0 : quality }];
  });
  return clauses.map((clause, index) => ({ clause, index })).sort((a, b) => b.clause.quality - a.clause.quality || a.index - b.index).map(({ clause }) => clause);
}

/**
 * Rule 1: the form an `Accept` header asks of `/api` or `/apis` on a server of `profile`.
 *
 * ## Example
 * ```ts
 * negotiateDiscovery('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json', serverProfile('1.32')); // 'v2'
 * negotiateDiscovery('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json', serverProfile('1.26')); // 'legacy'
 * ```
 */
export function negotiateDiscovery(accept: string | undefined, profile: ServerProfile): DiscoveryForm {
  if (accept === undefined || accept.trim() === '') return 'legacy';
  for (const clause of clausesOf(accept)) {
    const { parameters } = clause;
    const converts = parameters.has('g') || parameters.has('v') || parameters.has('as');
    if (!converts) {
      if (PLAIN_TYPES.has(clause.mediaType)) return 'legacy';
      continue;
    }
    const version = parameters.get('v');
    const json = clause.mediaType === 'application/json' || clause.mediaType === 'application/*' || clause.mediaType === '*/*';
    if (json && parameters.get('g') === 'apidiscovery.k8s.io' && parameters.get('as') === 'APIGroupDiscoveryList' && (version === 'v2' || version === 'v2beta1') && profile.aggregatedDiscovery.includes(version)) return version;
  }
  return 'notAcceptable';
}

/** The media type of an aggregated answer: what it is, as client-go reads it. */
export function aggregatedContentType(version: AggregatedDiscoveryVersion): string {
  return `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;
}

/**
 * Answers a discovery request (rules 1 to 3) and returns the HTTP code it answered with.
 *
 * @param served what the server serves now.
 * @param gzip the client accepts gzip.
 */
export function serveDiscovery(request: http.IncomingMessage, response: http.ServerResponse, target: DiscoveryTarget, served: readonly ServedResource[], profile: ServerProfile, gzip: boolean): number {
  if (target.aggregated === undefined) {
    sendJson(response, 200, JSON.stringify(target.document), {}, gzip);
    return 200;
  }
  const form = negotiateDiscovery(request.headers.accept, profile);
  if (form === 'notAcceptable') {
    sendStatus(response, notAcceptable('only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf'), gzip);
    return 406;
  }
  if (form === 'legacy') {
    sendJson(response, 200, JSON.stringify(target.document), {}, gzip);
    return 200;
  }
  const body = JSON.stringify(aggregatedDiscoveryDocument(served, target.aggregated, form));
  // The API server hashes the v2 document whatever version is asked for: one ETag per content.
  const v2 = form === 'v2' ? body : JSON.stringify(aggregatedDiscoveryDocument(served, target.aggregated, 'v2'));
  const etag = JSON.stringify(createHash('sha512').update(v2).digest('hex').toUpperCase());
  const headers = { 'Content-Type': aggregatedContentType(form), ETag: etag, Vary: 'Accept', 'Cache-Control': 'public' };
  if (request.headers['if-none-match'] === etag) {
    response.writeHead(304, headers);
    response.end();
    return 304;
  }
  sendJson(response, 200, body, headers, gzip);
  return 200;
}
