/**
 * What the writing examples (configMapPerDeployment, teamNamespaces) do with client-node's
 * `ApiException`: accept the status a write may expectedly get, and log an error in one line.
 */
import { ApiException } from '@kubernetes/client-node';

/** Awaits a write; true when it succeeded, false when the API server answered `code`, which is expected. */
export async function expectingStatus(code: number, request: Promise<unknown>): Promise<boolean> {
  try {
    await request;
    return true;
  } catch (error) {
    if (error instanceof ApiException && error.code === code) return false;
    throw error;
  }
}

/**
 * One line for an error. client-node's `ApiException` message spans lines (code, body, headers);
 * its `code` and the `message` of the Status in its body say it all.
 */
export function errorLine(error: unknown): string {
  if (!(error instanceof ApiException)) return error instanceof Error ? error.message : String(error);
  let status: unknown = error.body;
  try {
    if (typeof status === 'string') status = JSON.parse(status);
  } catch {
    // Not JSON (a proxy's error page): the code alone.
  }
  const message = typeof status === 'object' && status !== null ? (status as { message?: unknown }).message : undefined;
  return `HTTP ${error.code}${typeof message === 'string' ? `: ${message}` : ''}`;
}
