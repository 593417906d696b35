import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

/**
 * The command-line grammar shared by `rx-informer-apiserver` and the demo, so that both read flags
 * the same way and word their errors alike. Internal: the package does not export it.
 */

/** The error class a command throws for a bad command line; each command keeps its own so callers can catch it by type. */
export type ArgsErrorClass = new (message: string) => Error;

/** The flags a command accepts, and what it throws when the command line does not fit them. */
export interface FlagGrammar<S extends string, V extends string> {
  /** Flags that stand alone (`--help`); giving one a value (`--help=yes`) is an error. */
  readonly switches: readonly S[];
  /** Flags that take a value, as `--flag value` or `--flag=value`. */
  readonly valueFlags: readonly V[];
  /** Thrown, with a message naming the flag, for anything the grammar does not allow. */
  readonly error: ArgsErrorClass;
}

/** One flag read from the command line: a switch, or a value flag with its (unchecked) value. */
export type Flag<S extends string, V extends string> =
  | { readonly kind: 'switch'; readonly flag: S }
  | { readonly kind: 'value'; readonly flag: V; readonly value: string };

/** What a numeric flag accepts. */
export interface NumberRange {
  /** Reject fractions. */
  readonly integer: boolean;
  /** Smallest accepted value. */
  readonly min: number;
  /** Largest accepted value. Default: no upper bound. */
  readonly max?: number;
}

/**
 * The flags that shape a churning loopback cluster, shared by the apiserver CLI and the demo,
 * with what each accepts: initial pods, namespaces they spread over, mutations per second, seed.
 */
export const CHURN_FLAG_RANGES = {
  pods: { integer: true, min: 0 },
  namespaces: { integer: true, min: 1 },
  churn: { integer: false, min: 0 },
  seed: { integer: true, min: 0, max: 2 ** 32 - 1 },
} as const satisfies Record<string, NumberRange>;

/** Reads a command line by one {@link FlagGrammar}; see {@link argvParser}. */
export interface ArgvParser<S extends string, V extends string> {
  /**
   * The flags of `argv` (the arguments after the script name), in order. Lazy on purpose: a
   * command that stops at `--help` never sees an error in the arguments after it, while a bad
   * value before it still fails first, as the caller checks each value when it gets it.
   */
  flags(argv: readonly string[]): Generator<Flag<S, V>, void, undefined>;
  /** `text` as a number within `range`, or the grammar's error naming `--flag`, the range and `text`. */
  number(flag: V, text: string, range: NumberRange): number;
}

/**
 * A flag reader and number parser for one command's flags, over Node's `util.parseArgs`:
 * `--flag value` and `--flag=value`, with
 * the grammar's error for an argument that is not a flag, an unknown flag, a switch given a value
 * and a value flag missing its value (the next argument being a flag counts as missing, so that
 * `--duration --no-tty` does not read `--no-tty` as a duration).
 *
 * ## Example
 * ```ts
 * import { CliArgsError } from './cliArgs';
 *
 * const args = argvParser({ switches: ['help'], valueFlags: ['pods'], error: CliArgsError });
 * for (const flag of args.flags(['--pods=5'])) {
 *   if (flag.kind === 'value') console.log(args.number(flag.flag, flag.value, { integer: true, min: 0 })); // 5
 * }
 * ```
 *
 * @param grammar the switches and value flags the command accepts, and the error it throws.
 */
export function argvParser<const S extends string, const V extends string>(grammar: FlagGrammar<S, V>): ArgvParser<S, V> {
  const { error: ArgsError } = grammar;
  const switches: ReadonlySet<string> = new Set(grammar.switches);
  const valueFlags: ReadonlySet<string> = new Set(grammar.valueFlags);
  const isSwitch = (flag: string): flag is S => switches.has(flag);
  const isValueFlag = (flag: string): flag is V => valueFlags.has(flag);
  const parseArgsOptions: ParseArgsOptionsConfig = Object.fromEntries([
    ...grammar.switches.map((flag) => [flag, { type: 'boolean' as const }]),
    ...grammar.valueFlags.map((flag) => [flag, { type: 'string' as const }]),
  ]);

  return {
    *flags(argv) {
      // Node's util.parseArgs splits the command line (`--flag value`, `--flag=value`, a lone
      // `--`); with strict off it never throws, so every error below is this grammar's, raised in
      // order as the caller walks the flags.
      const { tokens } = parseArgs({ args: [...argv], options: parseArgsOptions, strict: false, allowPositionals: true, tokens: true });
      for (const token of tokens) {
        if (token.kind === 'positional') throw new ArgsError(`unexpected argument "${token.value}" (see --help)`);
        if (token.kind === 'option-terminator') throw new ArgsError('unknown option -- (see --help)');
        // A short option (`-p`, or `-abc` split into three): only long flags are accepted.
        if (!token.rawName.startsWith('--')) throw new ArgsError(`unexpected argument "${argv[token.index] ?? token.rawName}" (see --help)`);
        const flag = token.name;
        if (isSwitch(flag)) {
          if (token.inlineValue === true) throw new ArgsError(`--${flag} takes no value`);
          yield { kind: 'switch', flag };
          continue;
        }
        if (!isValueFlag(flag)) throw new ArgsError(`unknown option --${flag} (see --help)`);
        // parseArgs takes the next argument as the value whatever it is; a flag there means the value is missing.
        if (token.value === undefined || (token.inlineValue !== true && token.value.startsWith('--'))) throw new ArgsError(`--${flag} expects a value`);
        yield { kind: 'value', flag, value: token.value };
      }
    },
    number(flag, text, { integer, min, max }) {
      const value = Number(text);
      const kind = integer ? 'an integer' : 'a number';
      // Number('') and Number(' ') are 0, which would let an empty `--pods=` through as zero.
      if (text.trim() === '' || !Number.isFinite(value) || (integer && !Number.isInteger(value)) || value < min || (max !== undefined && value > max)) {
        throw new ArgsError(`--${flag} expects ${kind} ${max === undefined ? `>= ${min}` : `from ${min} to ${max}`}, got "${text}"`);
      }
      return value;
    },
  };
}
