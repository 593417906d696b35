import { filter, type MonoTypeOperatorFunction } from 'rxjs';
import type { Change } from '../store/change';
import type { KubeObject } from '../base/object';
import { parseLabelSelector } from '../store/selector';

/**
 * Keeps the changes of objects whose labels match a selector. An update passes when either its
 * old or its new state matches, so that a consumer also sees an object leave the selected set.
 *
 * ```
 * changes$:              --a{app=web}--b{app=db}--u{app:web→db}--|
 * matchLabels('app=web'): --a{app=web}------------u{app:web→db}--|
 * ```
 *
 * ## Example
 * ```ts
 * import { matchLabels, type Informer, type Pod } from 'rx-informer';
 *
 * declare const podInformer: Informer<Pod>;
 * podInformer.changes$.pipe(matchLabels({ app: 'web' })).subscribe((change) => console.log(change.type, change.key));
 * podInformer.changes$.pipe(matchLabels('tier in (frontend,edge),!canary')).subscribe(console.log);
 * ```
 *
 * @param selector a label selector string (the Kubernetes syntax, parsed once, here), or a map of
 *   labels that must all be equal (a `matchLabels` map).
 * @returns an operator that passes the changes of matching objects.
 * @throws SelectorSyntaxError when the selector string does not parse.
 */
export function matchLabels<T extends KubeObject = KubeObject>(selector: string | Readonly<Record<string, string>>): MonoTypeOperatorFunction<Change<T>> {
  const matches = typeof selector === 'string' ? parseSelectorMatcher(selector) : equalityMatcher(selector);
  return filter((change: Change<T>) => matches(change.object.metadata.labels) || (change.type === 'update' && matches(change.oldObject.metadata.labels)));
}

type LabelMatcher = (labels: Readonly<Record<string, string>> | undefined) => boolean;

function parseSelectorMatcher(text: string): LabelMatcher {
  const parsed = parseLabelSelector(text);
  return (labels) => parsed.matches(labels);
}

function equalityMatcher(required: Readonly<Record<string, string>>): LabelMatcher {
  const entries = Object.entries(required);
  return (labels) => labels !== undefined && entries.every(([key, value]) => Object.prototype.hasOwnProperty.call(labels, key) && labels[key] === value);
}
