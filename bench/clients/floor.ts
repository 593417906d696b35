/**
 * The physical floors: the same list pages and watch bytes an informer reads, split into lines and
 * JSON.parse'd with nothing else on top. `keep: false` drops each object (a1); `keep: true` keeps
 * it in one plain mutable Map (a2), the cheapest cache there is. Both call the handlers with the
 * parsed object, follow a clean end of the watch with a re-watch, and relist after a 410. In the
 * streaming scenario they list with a streaming list (each initial event parsed on its own, synced
 * at the initial-events-end bookmark); with `metadataOnly` they ask for `PartialObjectMetadata`.
 */
import http from 'node:http';
import type { KubeObject } from '../../lib/base/object';
import { resourcePath } from '../../lib/resources/resource';
import { RELIST_MARKER_ANNOTATION, benchResourceOf, type ClientConfig } from '../protocol';
import type { ClientUnderTest, UpdateHandler } from './harness';

const PAGE_LIMIT = 500;

interface ListBody {
  readonly metadata: { readonly resourceVersion: string; readonly continue?: string };
  readonly items: KubeObject[];
}

interface WatchLine {
  readonly type: string;
  readonly object: KubeObject & { readonly code?: number };
}

/** GETs `url` and resolves with its body decoded as it arrives; rejects on any status but 200. */
export function getText(url: string, headers: http.OutgoingHttpHeaders = {}): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    http
      .get(url, { headers }, (response) => {
        response.setEncoding('utf8');
        let body = '';
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => (response.statusCode === 200 ? resolve(body) : reject(new Error(`GET ${url}: ${response.statusCode} ${body.slice(0, 200)}`))));
        response.on('error', reject);
      })
      .on('error', reject);
  });
}

function keyOf(object: KubeObject): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}

function withoutManagedFields(object: KubeObject): KubeObject {
  const { managedFields: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata };
}

/** A floor client: list in pages of 500, then watch; see the file comment. */
export function floorClient(config: ClientConfig, handlers: readonly UpdateHandler[], keep: boolean): ClientUnderTest {
  const collection = resourcePath(benchResourceOf(config.objects));
  let cache = new Map<string, KubeObject>();
  let resourceVersion = '';
  let request: http.ClientRequest | undefined;
  let stopped = false;
  let failures = 0;
  // A metadata-only informer drops managedFields too, by default.
  const cacheable = config.dropManagedFields || config.metadataOnly === true ? withoutManagedFields : (object: KubeObject): KubeObject => object;
  // The Accept headers of client-go's metadata client (lib/sources/partialObjectMetadata.ts).
  const listHeaders = config.metadataOnly === true ? { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json' } : {};
  const watchHeaders = config.metadataOnly === true ? { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json' } : {};
  // The streaming scenario: the floor of a streaming list, each initial event parsed into the cache.
  const streaming = config.scenario === 'streaming';

  const notify = (object: KubeObject): void => {
    for (const handler of handlers) handler(object);
  };

  /** Lists everything into a fresh cache; returns the objects carrying the relist marker. */
  const list = async (): Promise<KubeObject[]> => {
    const fresh = new Map<string, KubeObject>();
    const marked: KubeObject[] = [];
    let continueToken: string | undefined;
    do {
      const query = new URLSearchParams({ limit: String(PAGE_LIMIT), ...(continueToken === undefined ? { resourceVersion: '0' } : { continue: continueToken }) });
      const page = JSON.parse(await getText(`${config.serverUrl}${collection}?${query}`, listHeaders)) as ListBody;
      for (const item of page.items) {
        if (keep) fresh.set(keyOf(item), cacheable(item));
        if (item.metadata.annotations?.[RELIST_MARKER_ANNOTATION] !== undefined) marked.push(item);
      }
      resourceVersion = page.metadata.resourceVersion;
      continueToken = page.metadata.continue || undefined;
    } while (continueToken !== undefined);
    cache = fresh;
    return marked;
  };

  /** Watches from `resourceVersion`; with `onInitialEventsEnd`, a streaming list first (into a fresh cache). */
  const watch = (onInitialEventsEnd?: () => void): void => {
    const initial: Record<string, string> = onInitialEventsEnd === undefined ? {} : { sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan' };
    const query = new URLSearchParams({ watch: '1', resourceVersion, allowWatchBookmarks: 'true', ...initial });
    let relistNeeded = false;
    let listing = onInitialEventsEnd !== undefined;
    request = http.get(`${config.serverUrl}${collection}?${query}`, { headers: watchHeaders }, (response) => {
      response.setEncoding('utf8');
      let rest = '';
      response.on('data', (chunk: string) => {
        let text = rest + chunk;
        let newline = text.indexOf('\n');
        let start = 0;
        while (newline !== -1) {
          const event = JSON.parse(text.slice(start, newline)) as WatchLine;
          const object = event.object;
          if (event.type === 'ERROR') {
            if (object.code === 410) relistNeeded = true;
          } else {
            resourceVersion = object.metadata.resourceVersion ?? resourceVersion;
            if (event.type === 'DELETED') {
              if (keep) cache.delete(keyOf(object));
            } else if (event.type === 'BOOKMARK') {
              if (listing && object.metadata.annotations?.['k8s.io/initial-events-end'] === 'true') {
                listing = false;
                onInitialEventsEnd?.();
              }
            } else {
              if (keep) cache.set(keyOf(object), cacheable(object));
              if (!listing) notify(object);
            }
          }
          start = newline + 1;
          newline = text.indexOf('\n', start);
        }
        rest = start === text.length ? '' : text.slice(start);
        text = '';
      });
      response.on('end', () => {
        if (stopped) return;
        if (!relistNeeded) return watch();
        void list().then((marked) => {
          marked.forEach(notify);
          watch();
        });
      });
    });
    request.on('error', (error) => {
      if (stopped) return;
      // A keep-alive socket the server closed meanwhile ("socket hang up"): watch again, as any client would.
      if (++failures > 5) throw error;
      setTimeout(watch, 100);
    });
  };

  return {
    async start() {
      if (streaming) {
        await new Promise<void>((resolve) => watch(resolve));
        return;
      }
      await list();
      watch();
    },
    async stop() {
      stopped = true;
      request?.destroy();
      cache.clear();
    },
  };
}
