/**
 * The logging seam: a subset of pino's interface, so a pino logger (or a child of one) can be
 * passed as is. The default is silent. Every line carries the informer's name in `informer`.
 */
export interface Logger {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** A logger that drops everything: the default. */
export const silentLogger: Logger = Object.freeze({
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
});
