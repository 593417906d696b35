/**
 * The logging seam: a subset of pino's interface, so a pino logger (or a child of one) can be
 * passed as is. The default is silent. Every line carries the informer's name in `informer`.
 */
export interface Logger {
  /** Detail for debugging: each request, each relist decision. */
  debug(fields: Record<string, unknown>, message: string): void;
  /** Normal milestones: synced, watch re-opened. */
  info(fields: Record<string, unknown>, message: string): void;
  /** Transient failures that are being retried: 429, 5xx, dropped connections. */
  warn(fields: Record<string, unknown>, message: string): void;
  /** Failures that need a person: 401, 403, 404, protocol errors. */
  error(fields: Record<string, unknown>, message: string): void;
}

/** A logger that drops everything: the default. */
export const silentLogger: Logger = Object.freeze({
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
});
