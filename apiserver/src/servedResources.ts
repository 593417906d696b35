import type { ServedResource } from './builtinResources';

/**
 * What the loopback server serves, as it changes: the fixed resources (built-ins, those given in
 * options) and those of the CustomResourceDefinitions it holds, added when a CRD is accepted and
 * removed when it is deleted. Routing and discovery read {@link all} on each request.
 *
 * A fixed resource stays served whatever CRDs come and go: a CRD's version whose group, version
 * and plural a fixed resource already has adds nothing (the resources given in options are served
 * as if built in).
 */
export class ServedResources {
  private readonly custom = new Map<string, readonly ServedResource[]>();
  private current: readonly ServedResource[];

  constructor(private readonly fixed: readonly ServedResource[]) {
    this.current = fixed;
  }

  /** Everything served now: the fixed resources, then each CRD's, in the order the CRDs were accepted. */
  get all(): readonly ServedResource[] {
    return this.current;
  }

  /** Serves (or serves anew) the resources of the CRD `name`. */
  setCustom(name: string, entries: readonly ServedResource[]): void {
    const fixed = new Set(this.fixed.map(servedKey));
    this.custom.set(
      name,
      entries.filter((entry) => !fixed.has(servedKey(entry))),
    );
    this.recompute();
  }

  /** Stops serving the resources of the CRD `name`. */
  removeCustom(name: string): void {
    if (this.custom.delete(name)) this.recompute();
  }

  private recompute(): void {
    this.current = [...this.fixed, ...[...this.custom.values()].flat()];
  }
}

function servedKey(entry: ServedResource): string {
  const { group, version, plural } = entry.resource;
  return `${group}/${version}/${plural}`;
}
