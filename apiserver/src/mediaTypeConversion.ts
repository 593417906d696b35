import type { Resource } from 'rx-informer';
import type { Status } from 'rx-informer';
import type { KubeObject } from 'rx-informer';
import type { StoredObject } from './history';
import { ApiStatusError, failure } from './status';

/**
 * Output negotiation of the loopback API server: which conversion a request's `Accept` asks for
 * (`;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`, `...List`, `Table`), as the API server reads it
 * (apiserver `endpoints/handlers/negotiation/negotiate.go`, `NegotiateMediaTypeOptions`, and
 * `RequestScope.AllowsMediaTypeTransform` in `handlers/rest.go`):
 *
 * 1. Clauses are tried by quality, highest first, ties in the order given (goautoneg).
 * 2. A clause matches a media type the server serves (`application/json`, `application/yaml`,
 *    `application/vnd.kubernetes.protobuf`), or a wildcard (`application/*`, `*\/*`), tried in that
 *    order.
 * 3. Its `as`, `g` and `v` name a conversion. No conversion is always allowed. Otherwise only
 *    `meta.k8s.io` `v1` and `v1beta1` are: `PartialObjectMetadata` and `PartialObjectMetadataList`
 *    in any media type, `Table` in JSON and YAML. A clause asking for anything else is passed over.
 * 4. When no clause is left: 406 NotAcceptable, `only the following media types are accepted: ...`.
 *
 * The loopback server writes JSON whatever media type won (it speaks no protobuf or YAML), with
 * the winning clause's conversion. Parameters it does not know are ignored, as the API server
 * ignores them (`Unrecognized`).
 */

/** The versions of `meta.k8s.io` that hold the conversion kinds. */
export type MetaVersion = 'v1' | 'v1beta1';

/** What a response is to be converted to. */
export type Conversion =
  | { readonly kind: 'none' }
  | { readonly kind: 'PartialObjectMetadata' | 'PartialObjectMetadataList' | 'Table'; readonly version: MetaVersion };

/** The media types the API server serves built-in resources in, in its codec factory's order. */
const SERVED_MEDIA_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'] as const;

interface Clause {
  readonly type: string;
  readonly subtype: string;
  readonly parameters: ReadonlyMap<string, string>;
  readonly quality: number;
}

function parseClauses(header: string): Clause[] {
  const clauses = header.split(',').flatMap((text): Clause[] => {
    const [mediaType = '', ...rest] = text.split(';').map((part) => part.trim());
    const slash = mediaType.indexOf('/');
    if (slash <= 0) return [];
    const parameters = new Map<string, string>();
    for (const parameter of rest) {
      const equals = parameter.indexOf('=');
      if (equals > 0) parameters.set(parameter.slice(0, equals).trim(), parameter.slice(equals + 1).trim());
    }
    const q = Number(parameters.get('q') ?? '1');
    parameters.delete('q');
    return [{ type: mediaType.slice(0, slash).toLowerCase(), subtype: mediaType.slice(slash + 1).toLowerCase(), parameters, quality: Number.isNaN(q) ? 0 : q }];
  });
  return clauses.map((clause, index) => ({ clause, index })).sort((a, b) => b.clause.quality - a.clause.quality || a.index - b.index).map(({ clause }) => clause);
}

function matches(clause: Clause, mediaType: string): boolean {
  const [type, subtype] = mediaType.split('/') as [string, string];
  return (clause.type === type && (clause.subtype === subtype || clause.subtype === '*')) || (clause.type === '*' && clause.subtype === '*');
}

/** `AllowsMediaTypeTransform`: the conversion a clause asks for, if this media type may carry it. */
function allowedConversion(clause: Clause, mediaType: string, convertsMetadata: boolean): Conversion | undefined {
  const as = clause.parameters.get('as');
  const group = clause.parameters.get('g');
  const version = clause.parameters.get('v');
  if (as === undefined && group === undefined && version === undefined) return { kind: 'none' };
  if (group !== 'meta.k8s.io' || (version !== 'v1' && version !== 'v1beta1')) return undefined;
  switch (as) {
    case 'PartialObjectMetadata':
    case 'PartialObjectMetadataList':
      return convertsMetadata ? { kind: as, version } : undefined;
    case 'Table':
      return mediaType === 'application/json' || mediaType === 'application/yaml' ? { kind: as, version } : undefined;
    default:
      return undefined;
  }
}

/**
 * The conversion a request's `Accept` header asks for.
 *
 * ## Example
 * ```ts
 * negotiateConversion('application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json', true);
 * // { kind: 'PartialObjectMetadataList', version: 'v1' }
 * ```
 * @param accept the header; none (or empty) asks for no conversion.
 * @param convertsMetadata false plays a server that cannot convert to PartialObjectMetadata (before
 * 1.15 for `v1`; an aggregated API server that does not): it passes such clauses over.
 * @throws ApiStatusError 406 NotAcceptable when no clause is acceptable.
 */
export function negotiateConversion(accept: string | undefined, convertsMetadata: boolean): Conversion {
  if (accept === undefined || accept.trim() === '') return { kind: 'none' };
  for (const clause of parseClauses(accept)) {
    for (const mediaType of SERVED_MEDIA_TYPES) {
      if (!matches(clause, mediaType)) continue;
      const conversion = allowedConversion(clause, mediaType, convertsMetadata);
      if (conversion !== undefined) return conversion;
    }
  }
  throw new ApiStatusError(notAcceptable(`only the following media types are accepted: ${SERVED_MEDIA_TYPES.join(', ')}`));
}

/** 406 NotAcceptable, as `errNotAcceptable.Status()` in the apiserver's handlers writes it. */
export function notAcceptable(message: string): Status {
  return failure(406, 'NotAcceptable', message);
}

/**
 * The Go type the API server names in a 406 for a conversion of the wrong kind: the internal type
 * its storage returns (`*core.PodList`, `*apps.Deployment`; `*unstructured.Unstructured...` for a
 * custom resource, which the loopback server cannot tell apart, so it names the built-in form).
 */
function goTypeOf(resource: Resource<KubeObject>, list: boolean): string {
  const packageName = resource.group === '' ? 'core' : resource.group.split('.')[0]!;
  return `*${packageName}.${resource.kind}${list ? 'List' : ''}`;
}

/**
 * The 406 of a list asked for as `PartialObjectMetadata`, or of a GET asked for as
 * `PartialObjectMetadataList` (`asPartialObjectMetadata`, `asPartialObjectMetadataList` in
 * `handlers/response.go`): negotiation accepts either kind on any endpoint, the conversion fails.
 * A watch asked for the wrong kind is no error: each event's conversion fails and the API server
 * sends the object as it is (`watchEmbeddedEncoder.doEncode`).
 * @throws ApiStatusError 406 NotAcceptable for such a list or GET.
 */
export function checkKindForVerb(conversion: Conversion, resource: Resource<KubeObject>, verb: 'list' | 'get'): void {
  if (verb === 'list' && conversion.kind === 'PartialObjectMetadata') {
    throw new ApiStatusError(notAcceptable(`you requested PartialObjectMetadata, but the requested object is a list (${goTypeOf(resource, true)})`));
  }
  if (verb === 'get' && conversion.kind === 'PartialObjectMetadataList') {
    throw new ApiStatusError(notAcceptable(`you requested PartialObjectMetadataList, but the requested object is not a list (${goTypeOf(resource, false)})`));
  }
}

/**
 * How a response writes its objects: a list's head around its metadata, its items, and single
 * objects (a GET, each watch event). The plain form writes the stored JSON.
 */
export interface ResponseForm {
  /** A list's opening up to its items' `[`, around the list metadata (`"resourceVersion":...`, no braces). */
  head(listMetadata: string): string;
  /** One list item. */
  row(entry: StoredObject | KubeObject): string;
  /** One object on its own: a GET's body, a watch event's object. */
  single(entry: StoredObject | KubeObject): string;
}

function isStored(entry: StoredObject | KubeObject): entry is StoredObject {
  return 'key' in entry && 'object' in entry;
}

/**
 * Objects as `meta.k8s.io` PartialObjectMetadata: their whole `metadata` (managedFields included,
 * as `meta.AsPartialObjectMetadata` copies it) under the conversion's kind and apiVersion; a list
 * is a `PartialObjectMetadataList` with the list's metadata. Each stored version's metadata JSON is
 * rendered once per server (`cache`), as the API server caches an event's encoding per encoder.
 */
export class PartialObjectMetadataForm implements ResponseForm {
  private readonly prefix: string;

  constructor(
    private readonly version: MetaVersion,
    private readonly cache: WeakMap<StoredObject, string>,
  ) {
    this.prefix = `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/${version}","metadata":`;
  }

  head(listMetadata: string): string {
    return `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/${this.version}","metadata":{${listMetadata}},"items":[`;
  }

  row(entry: StoredObject | KubeObject): string {
    if (!isStored(entry)) return `${this.prefix}${JSON.stringify(entry.metadata)}}`;
    let metadataJson = this.cache.get(entry);
    if (metadataJson === undefined) {
      metadataJson = JSON.stringify(entry.object.metadata);
      this.cache.set(entry, metadataJson);
    }
    return `${this.prefix}${metadataJson}}`;
  }

  single(entry: StoredObject | KubeObject): string {
    return this.row(entry);
  }
}

/**
 * The form a conversion writes objects in, or undefined for the stored JSON as it is (no
 * conversion; a Table, which this file leaves to the Table writer; a watch asked for a
 * `PartialObjectMetadataList`, whose events go out unconverted).
 */
export function metadataFormOf(conversion: Conversion, verb: 'list' | 'get' | 'watch', cache: WeakMap<StoredObject, string>): ResponseForm | undefined {
  const wanted = verb === 'list' ? 'PartialObjectMetadataList' : 'PartialObjectMetadata';
  return conversion.kind === wanted ? new PartialObjectMetadataForm(conversion.version, cache) : undefined;
}
