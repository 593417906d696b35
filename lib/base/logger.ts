/**
 * The logging seam: a subset of pino's interface, so a pino logger (or a child of one) can be
 * passed as is; winston, bunyan and `console` fit with a line of glue (docs/concepts.md, "Time
 * and logs"). Every line carries what it is about in its fields (`informer`, `handler`,
 * `reconciler`, `lease`, ...).
 *
 * The default, {@link defaultLogger}, writes warnings and errors to stderr, so a failure nobody
 * handles still leaves a trace; {@link silentLogger} opts out.
 */
export interface Logger {
  /** Detail for debugging: each request, each relist decision. */
  debug(fields: Record<string, unknown>, message: string): void;
  /** Normal milestones: synced, watch re-opened. */
  info(fields: Record<string, unknown>, message: string): void;
  /** Transient failures that are being retried: 429, 5xx, dropped connections, a resource not served (404), a reconcile failing again and again. */
  warn(fields: Record<string, unknown>, message: string): void;
  /** Failures that need a person: 400, 401, 403, protocol errors, a handler that threw, an object that cannot be cached. */
  error(fields: Record<string, unknown>, message: string): void;
}

/** A logger that drops everything: pass it as `logger` to opt out of the default's stderr lines. */
export const silentLogger: Logger = Object.freeze({
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
});

/** The levels of a {@link Logger}, least severe first, and `'silent'` for none. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** Options of {@link stderrLogger}. */
export interface StderrLoggerOptions {
  /** The least severe level written; less severe ones are dropped before anything is formatted. Default `'warn'`. */
  readonly level?: LogLevel;
  /** Where each line goes, without its newline. Default: `process.stderr`, one `write` per line. */
  readonly write?: (line: string) => void;
}

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
const LABELS = { debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR' } as const;
const drop = (): undefined => undefined;

/**
 * A logger that writes one line per entry, at `level` and above, to stderr:
 * `<ISO time> <LEVEL> <message> <field>=<value> ...`. A value that is not a plain word is
 * written as JSON (so a line never breaks), an `Error` as `"<name>: <message>"`, and an
 * undefined field not at all.
 *
 * ```
 * 2027-01-04T10:00:00.000Z ERROR handler failed handler=mirror key=default/web notification=update error="TypeError: x is undefined"
 * ```
 *
 * Levels below `level` are no-ops: nothing is formatted for them.
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { informer, pods, stderrLogger } from 'rx-informer';
 *
 * declare const kubeConfig: KubeConfig;
 * // Every relist decision and request too, not only warnings and errors.
 * const podInformer = informer(kubeConfig, pods, { logger: stderrLogger({ level: 'debug' }) });
 * ```
 *
 * @param options the least severe level written (default `'warn'`) and where lines go.
 * @returns a {@link Logger}.
 * @throws RangeError for an unknown level.
 */
export function stderrLogger(options: StderrLoggerOptions = {}): Logger {
  const level = options.level ?? 'warn';
  const least = level === 'silent' ? LEVELS.length : LEVELS.indexOf(level);
  if (least < 0) throw new RangeError(`log level must be one of ${[...LEVELS, 'silent'].join(', ')}, got ${String(level)}`);
  const write = options.write ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const at =
    (name: (typeof LEVELS)[number]) =>
    (fields: Record<string, unknown>, message: string): void =>
      write(`${new Date().toISOString()} ${LABELS[name]} ${oneLine(message)}${formatFields(fields)}`);
  const logger = {} as Record<(typeof LEVELS)[number], Logger['debug']>;
  LEVELS.forEach((name, index) => (logger[name] = index >= least ? at(name) : drop));
  return Object.freeze(logger);
}

/**
 * The logger used where none is given: {@link stderrLogger} at `'warn'`. Handler failures,
 * objects that cannot be cached, a reconcile failing again and again (from its fifth failure in
 * a row), lost leases and the reflector's retried and lasting failures reach stderr; debug and
 * info lines are dropped unformatted.
 */
export const defaultLogger: Logger = stderrLogger();

/** A message is written as it is, its line breaks escaped as JSON escapes them. */
function oneLine(message: string): string {
  return /[\r\n]/.test(message) ? message.replace(/\r/g, '\\r').replace(/\n/g, '\\n') : message;
}

function formatFields(fields: Record<string, unknown>): string {
  let text = '';
  for (const key in fields) {
    const value = fields[key];
    if (value !== undefined) text += ` ${key}=${formatValue(value)}`;
  }
  return text;
}

function formatValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=\\]+$/.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof Error) return JSON.stringify(`${value.name}: ${value.message}`);
  try {
    return JSON.stringify(value) ?? JSON.stringify(String(value));
  } catch {
    // A circular or hostile value: its tag is enough to see what it was.
    return JSON.stringify(Object.prototype.toString.call(value));
  }
}
