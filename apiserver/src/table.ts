import type { KubeObject } from 'rx-informer';
import { type StoredObject, jsonOf } from './history';
import { ApiStatusError, badRequest, notSupportedField } from './status';
import type { TablePrinter } from './tableColumns';
import { INITIAL_EVENTS_END_ANNOTATION } from './watchHandler';

/**
 * Server-side printing (`kubectl get`'s columns): a list, a GET or each watch event answered as a
 * `meta.k8s.io` Table when the request's Accept asks for one (`application/json;as=Table;v=v1;g=meta.k8s.io`),
 * as the API server's `transformResponseObject` and watch encoder do (apiserver
 * `endpoints/handlers/response.go`). Rows carry the object as `includeObject` asks: its metadata as
 * a PartialObjectMetadata (the default, what kubectl reads namespaces and labels from), the whole
 * object, or none. A watch sends the column definitions with its first event only.
 *
 * Whether a request asked for a Table is decided by the one negotiation of Accept that also picks
 * PartialObjectMetadata or the plain object (`mediaTypeConversion.ts`).
 */

/** The Table versions the API server serves. */
export type TableVersion = 'v1' | 'v1beta1';

/** What a request asked of a Table (`metav1.TableOptions`). */
export interface TableRequest {
  readonly version: TableVersion;
  /** `includeObject`: `Metadata` (default), `Object` or `None`. */
  readonly includeObject: 'Metadata' | 'Object' | 'None';
}

const INCLUDE_OBJECT = ['Metadata', 'None', 'Object'] as const;

/**
 * The request's Table options (`includeObject` from the query).
 * @throws ApiStatusError 400 for an unknown includeObject, with `ValidateTableOptions`' message
 */
export function tableRequest(version: TableVersion, query: Readonly<Record<string, string>>): TableRequest {
  const includeObject = query['includeObject'] ?? '';
  if (includeObject === '') return { version, includeObject: 'Metadata' };
  if ((INCLUDE_OBJECT as readonly string[]).includes(includeObject)) return { version, includeObject: includeObject as TableRequest['includeObject'] };
  const error = notSupportedField('includeObject', includeObject, INCLUDE_OBJECT);
  throw new ApiStatusError(badRequest(`Unable to convert to Table as requested: ${error.field}: ${error.body}`));
}

function isStored(entry: StoredObject | KubeObject): entry is StoredObject {
  return 'key' in entry && 'object' in entry;
}

/** Renders Tables for one request (one list, one GET, or one watch, whose first Table alone has column definitions). */
export class TableWriter {
  private columnsSent = false;

  constructor(
    private readonly request: TableRequest,
    private readonly printer: TablePrinter,
    private readonly now: () => number = Date.now,
  ) {}

  /** `{"kind":"Table",...,"rows":[` around list metadata (`"resourceVersion":...`, without braces). */
  head(metadata: string): string {
    const columns = this.columnsSent ? 'null' : JSON.stringify(this.printer.columns);
    this.columnsSent = true;
    return `{"kind":"Table","apiVersion":"meta.k8s.io/${this.request.version}","metadata":{${metadata}},"columnDefinitions":${columns},"rows":[`;
  }

  /** One row: its cells, the printer's row conditions, and the object as `includeObject` asks. */
  row(entry: StoredObject | KubeObject): string {
    const object = isStored(entry) ? entry.object : entry;
    const { cells, conditions } = this.printer.row(object, this.now());
    const conditionsJson = conditions === undefined ? '' : `,"conditions":${JSON.stringify(conditions)}`;
    return `{"cells":${JSON.stringify(cells)}${conditionsJson},"object":${this.rowObject(entry, object)}}`;
  }

  /** A one-row Table of one object (a GET, a watch event), at the object's resourceVersion. */
  single(entry: StoredObject | KubeObject): string {
    const object = isStored(entry) ? entry.object : entry;
    const rv = object.metadata.resourceVersion;
    return `${this.head(rv === undefined || rv === '' ? '' : `"resourceVersion":${JSON.stringify(rv)}`)}${this.row(entry)}]}`;
  }

  private rowObject(entry: StoredObject | KubeObject, object: KubeObject): string {
    // The initial-events-end bookmark always travels as metadata, whatever includeObject says.
    const endBookmark = object.metadata.annotations?.[INITIAL_EVENTS_END_ANNOTATION] === 'true' && object.metadata.name === undefined;
    if (this.request.includeObject === 'None') return 'null';
    if (this.request.includeObject === 'Object' && !endBookmark) return isStored(entry) ? jsonOf(entry) : JSON.stringify(object);
    return `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/${this.request.version}","metadata":${JSON.stringify(object.metadata)}}`;
  }
}
