import type { Logger } from '../base/logger';
import type { ReflectorInput, ReflectorTransition } from './reflectorState';

/** A log line's level. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Writes one log line of the reflector. */
export type ReflectorLog = (level: LogLevel, message: string, fields?: Record<string, unknown>) => void;

/**
 * The reflector's log: every line carries the informer's name as `informer`, and a logger that
 * throws is ignored, since a broken logger must not stop the cache and has nowhere to report to.
 */
export function reflectorLog(logger: Logger, name: string): ReflectorLog {
  return (level, message, fields = {}) => {
    try {
      logger[level]({ informer: name, ...fields }, message);
    } catch {
      // Nowhere left to report it.
    }
  };
}

/** The fields of a transition's log line: where the reflector is, and why it waits. */
export function transitionLogFields(input: ReflectorInput, transition: ReflectorTransition): Record<string, unknown> {
  const fields: Record<string, unknown> = { resourceVersion: transition.context.resourceVersion, attempt: transition.context.failures };
  // The error as the reflector took it: a 404 becomes the ResourceGoneError that wraps it.
  if (input.type === 'failed') fields['err'] = transition.context.lastError?.cause === input.error ? transition.context.lastError : input.error;
  if (transition.state.name === 'backingOff') fields['retryInMs'] = transition.state.delayMs;
  return fields;
}
