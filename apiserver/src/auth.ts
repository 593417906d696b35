import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { KubeObject } from 'rx-informer';
import type { Resource } from 'rx-informer';
import type { Status } from 'rx-informer';
import { forbidden, unauthorized } from './status';

/**
 * Authentication (bearer token or client certificate) and a deny-list authorizer, answering with
 * the API server's 401 and 403 Status bodies.
 */

/** The API verbs the loopback server serves. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'delete';

/** Requests matching every set field are denied with 403. */
export interface DenyRule {
  readonly verb?: Verb | readonly Verb[];
  /** The plural resource name (`pods`). */
  readonly resource?: string;
  /** Only in this namespace; unset matches any namespace and cluster-scoped requests. */
  readonly namespace?: string;
}

/** The user a bearer token stands for (a service account, as in-cluster controllers run). */
export const TOKEN_USER = 'system:serviceaccount:default:test';
/** The user when the server asks for no credentials. */
export const ANONYMOUS_USER = 'system:anonymous';

/** Who made a request, or the 401 to answer with. */
export type Authentication = { readonly user: string } | { readonly status: Status };

/**
 * Identifies the caller. A client certificate signed by the test CA names its CN; otherwise a
 * matching bearer token is required when the server has one, and anyone is anonymous when not.
 */
export function authenticate(request: IncomingMessage, token: string | undefined): Authentication {
  const socket = request.socket as Partial<TLSSocket>;
  if (socket.authorized === true && typeof socket.getPeerCertificate === 'function') {
    const cn = socket.getPeerCertificate().subject?.CN;
    if (typeof cn === 'string' && cn !== '') return { user: cn };
  }
  const header = request.headers.authorization;
  const presented = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : undefined;
  if (token === undefined) return { user: presented === undefined ? ANONYMOUS_USER : TOKEN_USER };
  if (presented === token) return { user: TOKEN_USER };
  return { status: unauthorized() };
}

function ruleMatches(rule: DenyRule, verb: Verb, resource: string, namespace: string | undefined): boolean {
  if (rule.verb !== undefined) {
    const verbs: readonly Verb[] = typeof rule.verb === 'string' ? [rule.verb] : rule.verb;
    if (!verbs.includes(verb)) return false;
  }
  if (rule.resource !== undefined && rule.resource !== resource) return false;
  if (rule.namespace !== undefined && rule.namespace !== namespace) return false;
  return true;
}

/** The 403 for a denied request, or undefined when allowed. */
export function authorize(
  rules: readonly DenyRule[],
  user: string,
  verb: Verb,
  resource: Resource<KubeObject>,
  namespace: string | undefined,
  name: string | undefined,
): Status | undefined {
  for (const rule of rules) {
    if (ruleMatches(rule, verb, resource.plural, namespace)) return forbidden(resource, user, verb, namespace, name);
  }
  return undefined;
}
