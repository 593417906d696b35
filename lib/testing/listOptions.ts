import type { KubeObject } from '../store/object';
import { parseFieldSelector, parseLabelSelector, SelectorSyntaxError } from '../store/selector';
import type { ServedResource } from './builtinResources';
import { ApiStatusError, badRequest, forbiddenField, invalidListOptions, notSupportedField, type FieldError } from './status';

/**
 * The query of a list or watch, parsed and validated as `metav1.ListOptions` is by the API server
 * (PROTOCOL.md B.2, B.5). Invalid combinations are 422 Invalid; unparsable values are 400.
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
  readonly sendInitialEvents: boolean | undefined;
  /** True when a label or field selector narrows the result (remainingItemCount is then left out). */
  readonly selective: boolean;
  /** Canonical selector text, part of the identity of a paged list's snapshot. */
  readonly selectorKey: string;
  /** Whether an object passes the label and field selectors (namespace is checked separately). */
  readonly matches: (object: KubeObject) => boolean;
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

function parseBoolean(name: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0' || value === '') return false;
  throw new ApiStatusError(badRequest(`invalid boolean value for ${name}: ${JSON.stringify(value)}`));
}

function parseNonNegativeInteger(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value)) throw new ApiStatusError(badRequest(`invalid value for ${name}: ${JSON.stringify(value)}`));
  return Number(value);
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
  return (object) =>
    (!hasLabels || labels.matches(object.metadata.labels)) && (!hasFields || fields.matches((path) => readPath(object, path)));
}

function validate(query: Omit<ListQuery, 'matches' | 'selective' | 'selectorKey'>): FieldError[] {
  const errors: FieldError[] = [];
  const match = query.resourceVersionMatch;
  if (query.watch) {
    if (query.sendInitialEvents !== undefined && match !== 'NotOlderThan') {
      errors.push(forbiddenField('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
    }
    if (match !== undefined) {
      if (query.sendInitialEvents === undefined) {
        errors.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
      }
      if (match !== 'NotOlderThan') errors.push(notSupportedField('resourceVersionMatch', match, ['NotOlderThan']));
      if (query.continueToken !== undefined) errors.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    }
    return errors;
  }
  if (match !== undefined) {
    if (query.resourceVersion === undefined) {
      errors.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    }
    if (query.continueToken !== undefined) errors.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    if (match !== 'Exact' && match !== 'NotOlderThan') errors.push(notSupportedField('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    if (match === 'Exact' && query.resourceVersion === '0') {
      errors.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
    }
  }
  if (query.sendInitialEvents !== undefined) errors.push(forbiddenField('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return errors;
}

/**
 * Parses and validates the query of a collection GET.
 * @throws ApiStatusError 400 for unparsable values and selectors, 422 for invalid combinations
 */
export function parseListQuery(served: ServedResource, query: Readonly<Record<string, string>>): ListQuery {
  const nonEmpty = (name: string): string | undefined => (query[name] === undefined || query[name] === '' ? undefined : query[name]);
  const base = {
    watch: parseBoolean('watch', query.watch) === true,
    resourceVersion: nonEmpty('resourceVersion'),
    resourceVersionMatch: nonEmpty('resourceVersionMatch'),
    limit: parseNonNegativeInteger('limit', query.limit) ?? 0,
    continueToken: nonEmpty('continue'),
    timeoutSeconds: parseNonNegativeInteger('timeoutSeconds', query.timeoutSeconds),
    allowWatchBookmarks: parseBoolean('allowWatchBookmarks', query.allowWatchBookmarks) === true,
    sendInitialEvents: parseBoolean('sendInitialEvents', query.sendInitialEvents),
  };
  const labelText = query.labelSelector ?? '';
  const fieldText = query.fieldSelector ?? '';
  const matches = selectorMatcher(served, labelText, fieldText);
  const errors = validate(base);
  if (errors.length > 0) throw new ApiStatusError(invalidListOptions(errors));
  return { ...base, matches, selective: matches !== ACCEPT_ALL, selectorKey: `${labelText}\u0000${fieldText}` };
}
