/**
 * RFC 6902 JSON Patch (`application/json-patch+json`) as the API server applies it: with the
 * `gopkg.in/evanphx/json-patch.v4` library (apiserver `endpoints/handlers/patch.go`), whose
 * behaviour differs from the RFC in a few places that clients meet:
 *
 * - array indices may be negative, counting from the end (`SupportNegativeIndices`, on by default):
 *   for `remove`, `-1` is the last item; for `add`, `-1` is the end (as `-`) and `-2` before the
 *   last item;
 * - `replace` of a missing object member adds it (only a missing array index fails);
 * - `add` or `replace` without a `value` sets `null`, and `copy` from a missing member copies `null`;
 * - a path is split on `/` and its first segment ignored (so `"a/b"` means `"/b"`); `""` fails.
 *
 * Decoding errors are the 400s the API server answers (its Go JSON decoder's messages); a patch
 * that does not apply is one {@link JsonPatchError}, which the API server answers with a 422 whose
 * message does not say why (see `objectHandlers.ts`).
 */

/** One operation as sent: a JSON object whose members are read as the library reads them. */
export type JsonPatchOperation = Readonly<Record<string, unknown>>;

/** The patch body is not a JSON Patch document: the API server's 400 BadRequest message. */
export class JsonPatchDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonPatchDecodeError';
  }
}

/** An operation does not apply (a missing path, a failed `test`, an unknown `op`). */
export class JsonPatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonPatchError';
  }
}

/** The JSON type name Go's decoder prints in "cannot unmarshal X into Go value of type T". */
function goJsonType(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  return typeof value === 'boolean' ? 'bool' : typeof value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Decodes a parsed JSON Patch body (`jsonpatch.DecodePatch`): an array of objects, or `null` (no
 * operations). @throws JsonPatchDecodeError with Go's message for anything else
 */
export function decodeJsonPatch(body: unknown): readonly (JsonPatchOperation | null)[] {
  if (body === null) return [];
  if (!Array.isArray(body)) throw new JsonPatchDecodeError(`json: cannot unmarshal ${goJsonType(body)} into Go value of type jsonpatch.Patch`);
  for (const operation of body) {
    if (operation !== null && !isRecord(operation)) {
      throw new JsonPatchDecodeError(`json: cannot unmarshal ${goJsonType(operation)} into Go value of type jsonpatch.Operation`);
    }
  }
  return body as (JsonPatchOperation | null)[];
}

type Container = Record<string, unknown> | unknown[];

/** RFC 6901 reference tokens of a path, first segment dropped as the library does. */
function tokensOf(path: string): { parents: string[]; key: string } | undefined {
  const split = path.split('/');
  if (split.length < 2) return undefined;
  const unescape = (token: string): string => token.replace(/~1/g, '/').replace(/~0/g, '~');
  return { parents: split.slice(1, -1).map(unescape), key: unescape(split[split.length - 1]!) };
}

/** Go's `strconv.Atoi`: optional sign, decimal digits. */
function arrayIndex(key: string): number | undefined {
  return /^[+-]?\d+$/.test(key) ? Number.parseInt(key, 10) : undefined;
}

/** The container holding the path's last token, or undefined when a parent is missing. */
function findContainer(document: Container, path: string): { container: Container; key: string } | undefined {
  const tokens = tokensOf(path);
  if (tokens === undefined) return undefined;
  let current: Container = document;
  for (const part of tokens.parents) {
    const next = Array.isArray(current) ? itemAt(current, part) : current[part];
    if (typeof next !== 'object' || next === null) return undefined;
    current = next as Container;
  }
  return { container: current, key: tokens.key };
}

function itemAt(array: unknown[], key: string): unknown {
  const index = arrayIndex(key);
  return index === undefined || index < 0 || index >= array.length ? undefined : array[index];
}

function get(container: Container, key: string, path: string): unknown {
  if (!Array.isArray(container)) return container[key];
  const index = arrayIndex(key);
  if (index === undefined || index < 0 || index >= container.length) throw new JsonPatchError(`Unable to access invalid index: ${key} (${path})`);
  return container[index];
}

function add(container: Container, key: string, value: unknown, path: string): void {
  if (!Array.isArray(container)) {
    container[key] = value;
    return;
  }
  if (key === '-') {
    container.push(value);
    return;
  }
  let index = arrayIndex(key);
  const size = container.length + 1;
  if (index === undefined || index >= size || index < -size) throw new JsonPatchError(`error in add for path: '${path}': invalid index ${key}`);
  if (index < 0) index += size;
  container.splice(index, 0, value);
}

function remove(container: Container, key: string, path: string): void {
  if (!Array.isArray(container)) {
    if (!(key in container)) throw new JsonPatchError(`error in remove for path: '${path}': Unable to remove nonexistent key: ${key}`);
    delete container[key];
    return;
  }
  let index = arrayIndex(key);
  if (index === undefined || index >= container.length || index < -container.length) throw new JsonPatchError(`error in remove for path: '${path}': invalid index ${key}`);
  if (index < 0) index += container.length;
  container.splice(index, 1);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((item, i) => deepEqual(item, (b as unknown[])[i]));
  const keysA = Object.keys(a);
  return keysA.length === Object.keys(b).length && keysA.every((key) => key in b && deepEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

function stringMember(operation: JsonPatchOperation, member: 'path' | 'from', op: string): string {
  const value = operation[member];
  if (typeof value !== 'string') throw new JsonPatchError(`${op} operation failed to decode ${member}`);
  return value;
}

function locate(document: Container, path: string, op: string): { container: Container; key: string } {
  const found = findContainer(document, path);
  if (found === undefined) throw new JsonPatchError(`${op} operation does not apply: doc is missing path: "${path}"`);
  return found;
}

/**
 * Applies decoded operations, in order, to `document` (mutated in place: pass a copy).
 * @throws JsonPatchError at the first operation that does not apply
 */
export function applyJsonPatch(document: Record<string, unknown>, operations: readonly (JsonPatchOperation | null)[]): void {
  for (const operation of operations) {
    const op = typeof operation?.['op'] === 'string' ? operation['op'] : 'unknown';
    if (operation === null || !['add', 'remove', 'replace', 'move', 'copy', 'test'].includes(op)) throw new JsonPatchError(`Unexpected kind: ${op}`);
    const value = 'value' in operation ? operation['value'] : null;
    const path = stringMember(operation, 'path', op);
    switch (op) {
      case 'add': {
        const { container, key } = locate(document, path, op);
        add(container, key, value, path);
        break;
      }
      case 'remove': {
        const { container, key } = locate(document, path, op);
        remove(container, key, path);
        break;
      }
      case 'replace': {
        const { container, key } = locate(document, path, op);
        get(container, key, path);
        if (Array.isArray(container)) container[arrayIndex(key)!] = value;
        else container[key] = value;
        break;
      }
      case 'move':
      case 'copy': {
        const from = stringMember(operation, 'from', op);
        const source = locate(document, from, op);
        const moved = get(source.container, source.key, from);
        if (op === 'move') remove(source.container, source.key, from);
        const target = locate(document, path, op);
        add(target.container, target.key, op === 'copy' ? structuredClone(moved ?? null) : moved, path);
        break;
      }
      case 'test': {
        const { container, key } = locate(document, path, op);
        const actual = get(container, key, path);
        if (actual === undefined || !('value' in operation) || !deepEqual(actual, value)) throw new JsonPatchError(`testing value ${path} failed`);
        break;
      }
    }
  }
}
