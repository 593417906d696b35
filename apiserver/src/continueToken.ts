/**
 * Continue tokens as the API server shapes them (`storage/continue.go`):
 * base64url (no padding) of `{"v":"meta.k8s.io/v1","rv":<list rv>,"start":"<next key>"}`.
 * The loopback server adds when the token was issued (`iat`, ms) and the generation of
 * `expireContinueTokens()` it belongs to (`gen`), so it can answer 410 for expired tokens.
 */

/** What a continue token carries. */
export interface ContinueToken {
  /**
   * The resourceVersion of the first page: every page is served at it. -1 (the token of a
   * compacted continue's 410) continues at the latest resourceVersion.
   */
  readonly rv: number;
  /** Resume at the first key not less than this. */
  readonly start: string;
  readonly issuedAt: number;
  readonly generation: number;
}

/** A token that does not decode; the message is the API server's. */
export class InvalidContinueTokenError extends Error {
  constructor(detail: string) {
    super(`continue key is not valid: ${detail}`);
    this.name = 'InvalidContinueTokenError';
  }
}

/** The rv of a token that continues at the latest resourceVersion (`storage/continue.go`). */
export const LATEST = -1;

/** Encodes a token. */
export function encodeContinueToken(token: ContinueToken): string {
  const json = JSON.stringify({ v: 'meta.k8s.io/v1', rv: token.rv, start: token.start, iat: token.issuedAt, gen: token.generation });
  return Buffer.from(json, 'utf8').toString('base64url');
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Decodes a token. @throws InvalidContinueTokenError on anything this server did not issue */
export function decodeContinueToken(text: string): ContinueToken {
  if (!BASE64URL.test(text)) throw new InvalidContinueTokenError('illegal base64 data');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch (error) {
    throw new InvalidContinueTokenError(error instanceof Error ? error.message : String(error));
  }
  if (typeof parsed !== 'object' || parsed === null) throw new InvalidContinueTokenError('not a JSON object');
  const { v, rv, start, iat, gen } = parsed as Record<string, unknown>;
  if (v !== 'meta.k8s.io/v1') throw new InvalidContinueTokenError(`got invalid version ${JSON.stringify(v)}`);
  if (typeof rv !== 'number' || !Number.isSafeInteger(rv) || (rv <= 0 && rv !== LATEST)) {
    throw new InvalidContinueTokenError('incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
  if (typeof start !== 'string' || start === '') throw new InvalidContinueTokenError('encoded start key empty');
  if (typeof iat !== 'number' || typeof gen !== 'number') throw new InvalidContinueTokenError('not issued by this server');
  return { rv, start, issuedAt: iat, generation: gen };
}
