import type { KubeObject } from 'rx-informer';
import { parseFieldSelector, parseLabelSelector, SelectorSyntaxError } from 'rx-informer';
import type { ServedResource } from './builtinResources';
import type { ServerProfile } from './serverVersion';
import { ApiStatusError, badRequest, forbiddenField, invalidListOptions, notSupportedField, type FieldError } from './status';

/**
 * The query of a list or watch, parsed, defaulted and validated as `metav1.ListOptions` is by the
 * API server of the profile's version (PROTOCOL.md B.2, B.5; `handlers/get.go` `ListResource`).
 * Invalid combinations are 422 Invalid; unparsable values are 400.
 */
export interface ListQuery {
  readonly watch: boolean;
  /** The raw resourceVersion: undefined when absent or empty. */
  readonly resourceVersion: string | undefined;
  readonly resourceVersionMatch: string | undefined;
  readonly limit: number;
  readonly continueToken: string | undefined;
  readonly timeoutSeconds: number | undefined;
  readonly allowWatchBookmarks: boolean;
  /** After `SetListOptionsDefaults`; always undefined where the version does not know the parameter. */
  readonly sendInitialEvents: boolean | undefined;
  /** True when a label or field selector narrows the result (remainingItemCount is then left out). */
  readonly selective: boolean;
  /** Canonical selector text, part of the identity of a paged list's snapshot. */
  readonly selectorKey: string;
  /** Whether an object passes the label and field selectors (namespace is checked separately). */
  readonly matches: (object: KubeObject) => boolean;
  /** The `shardSelector` applied (KEP-5866), canonical: a list echoes it in `metadata.shardInfo`. */
  readonly shardSelector?: string;
}

const ACCEPT_ALL = (): boolean => true;

function readPath(object: KubeObject, path: string): string | undefined {
  let value: unknown = object;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : String(value);
}

/**
 * A boolean query value as the API server's parameter codec reads it
 * (apimachinery `runtime.Convert_Slice_string_To_bool`, the same in every version modelled): only
 * "0" and "false" in any letter case are false; anything else, the empty value of a bare `?watch`
 * included, is true. It is not Go's `strconv.ParseBool` and never a 400: `watch=True` (Python's
 * client), `watch=yes` and `watch=` are all watches.
 */
export function queryBoolean(value: string): boolean {
  return value !== '0' && value.toLowerCase() !== 'false';
}

function parseBoolean(value: string | undefined): boolean | undefined {
  return value === undefined ? undefined : queryBoolean(value);
}

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

/**
 * An integer query value as the parameter codec reads it: Go's `strconv.ParseInt(value, 10, 64)`,
 * whose error text the API server answers as a 400 BadRequest. An empty value is an error too.
 */
function parseInt64(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const quoted = JSON.stringify(value);
  if (!/^[+-]?\d+$/.test(value)) throw new ApiStatusError(badRequest(`strconv.ParseInt: parsing ${quoted}: invalid syntax`));
  const parsed = BigInt(value);
  if (parsed > INT64_MAX || parsed < INT64_MIN) throw new ApiStatusError(badRequest(`strconv.ParseInt: parsing ${quoted}: value out of range`));
  return Number(parsed);
}

/** A resourceVersion as the server's integer. @throws ApiStatusError 400 */
export function parseResourceVersion(text: string): number {
  if (!/^\d{1,15}$/.test(text)) {
    throw new ApiStatusError(badRequest(`resourceVersion: Invalid value: ${JSON.stringify(text)}: strconv.ParseUint: parsing ${JSON.stringify(text)}: invalid syntax`));
  }
  return Number(text);
}

function selectorMatcher(served: ServedResource, labelText: string, fieldText: string): (object: KubeObject) => boolean {
  let labels;
  let fields;
  try {
    labels = parseLabelSelector(labelText);
    fields = parseFieldSelector(fieldText);
  } catch (error) {
    if (error instanceof SelectorSyntaxError) throw new ApiStatusError(badRequest(`unable to parse requirement: ${error.message}`));
    throw error;
  }
  const supported = new Set(['metadata.name', 'metadata.namespace', ...served.extraFieldLabels]);
  for (const requirement of fields.requirements) {
    if (!supported.has(requirement.field)) throw new ApiStatusError(badRequest(`field label not supported: ${requirement.field}`));
  }
  const hasLabels = labels.requirements.length > 0;
  const hasFields = fields.requirements.length > 0;
  if (!hasLabels && !hasFields) return ACCEPT_ALL;
  const paths = served.fieldLabelPaths ?? {};
  return (object) =>
    (!hasLabels || labels.matches(object.metadata.labels)) && (!hasFields || fields.matches((label) => readPath(object, paths[label] ?? label)));
}

type ParsedOptions = Omit<ListQuery, 'matches' | 'selective' | 'selectorKey'>;

const NOT_OLDER_THAN = 'NotOlderThan';

/** The checks of `resourceVersionMatch` that lists make in every version (`internalversion/validation`). */
function validateListMatch(query: ParsedOptions, match: string, errors: FieldError[]): void {
  if (query.resourceVersion === undefined) {
    errors.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
  }
  if (query.continueToken !== undefined) errors.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
  if (match !== 'Exact' && match !== NOT_OLDER_THAN) errors.push(notSupportedField('resourceVersionMatch', match, ['Exact', NOT_OLDER_THAN, '']));
  if (match === 'Exact' && query.resourceVersion === '0') {
    errors.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  }
}

/** Before 1.27 one function checks lists and watches alike, and knows no `sendInitialEvents`. */
function validateBeforeWatchList(query: ParsedOptions): FieldError[] {
  const errors: FieldError[] = [];
  const match = query.resourceVersionMatch;
  if (match === undefined) return errors;
  if (query.watch) errors.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch'));
  validateListMatch(query, match, errors);
  return errors;
}

/** From 1.27: watches have their own rules, and `sendInitialEvents` needs the WatchList gate. */
function validateWatch(query: ParsedOptions, gateOn: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const match = query.resourceVersionMatch;
  if (query.sendInitialEvents !== undefined) {
    if (match !== NOT_OLDER_THAN) {
      errors.push(forbiddenField('resourceVersionMatch', `sendInitialEvents requires setting resourceVersionMatch to ${NOT_OLDER_THAN}`));
    }
    if (!gateOn) errors.push(forbiddenField('sendInitialEvents', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled'));
  }
  if (match !== undefined) {
    if (query.sendInitialEvents === undefined) {
      errors.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
    }
    if (match !== NOT_OLDER_THAN) errors.push(notSupportedField('resourceVersionMatch', match, [NOT_OLDER_THAN]));
    if (query.continueToken !== undefined) errors.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
  }
  return errors;
}

function validate(query: ParsedOptions, profile: ServerProfile): FieldError[] {
  if (profile.watchList === 'unsupported') return validateBeforeWatchList(query);
  if (query.watch) return validateWatch(query, profile.watchList === 'on');
  const errors: FieldError[] = [];
  if (query.resourceVersionMatch !== undefined) validateListMatch(query, query.resourceVersionMatch, errors);
  if (query.sendInitialEvents !== undefined) errors.push(forbiddenField('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return errors;
}

/**
 * `SetListOptionsDefaults` with the WatchList gate on: a watch at resourceVersion "" or "0" that
 * sets neither `sendInitialEvents` nor `resourceVersionMatch` becomes a streaming list.
 */
function withDefaults(query: ParsedOptions, profile: ServerProfile): ParsedOptions {
  if (profile.watchList !== 'on' || !query.watch || query.sendInitialEvents !== undefined || query.resourceVersionMatch !== undefined) return query;
  if (query.resourceVersion !== undefined && query.resourceVersion !== '0') return query;
  return { ...query, sendInitialEvents: true, resourceVersionMatch: NOT_OLDER_THAN };
}

/**
 * Parses and validates the query of a collection GET.
 * @throws ApiStatusError 400 for unparsable values and selectors, 422 for invalid combinations
 */
export function parseListQuery(served: ServedResource, query: Readonly<Record<string, string>>, profile: ServerProfile): ListQuery {
  const nonEmpty = (name: string): string | undefined => (query[name] === undefined || query[name] === '' ? undefined : query[name]);
  const base = {
    watch: parseBoolean(query.watch) === true,
    resourceVersion: nonEmpty('resourceVersion'),
    resourceVersionMatch: nonEmpty('resourceVersionMatch'),
    // A negative limit is no limit (the storage layers check `limit > 0`).
    limit: Math.max(0, parseInt64(query.limit) ?? 0),
    continueToken: nonEmpty('continue'),
    timeoutSeconds: parseInt64(query.timeoutSeconds),
    allowWatchBookmarks: parseBoolean(query.allowWatchBookmarks) === true,
    // Before 1.27 the query decoder has no such field and ignores the parameter.
    sendInitialEvents: profile.watchList === 'unsupported' ? undefined : parseBoolean(query.sendInitialEvents),
  };
  const labelText = query.labelSelector ?? '';
  const fieldText = query.fieldSelector ?? '';
  const matches = selectorMatcher(served, labelText, fieldText);
  const defaulted = withDefaults(base, profile);
  const errors = validate(defaulted, profile);
  if (errors.length > 0) throw new ApiStatusError(invalidListOptions(errors));
  return { ...defaulted, matches, selective: matches !== ACCEPT_ALL, selectorKey: `${labelText}\u0000${fieldText}` };
}
