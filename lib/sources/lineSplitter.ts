import { ProtocolError } from '../base/errors';

/**
 * The longest watch line accepted by default. 64 MiB: far above any object etcd stores (1.5 MiB
 * by default), low enough to bound memory.
 *
 * ## Example
 * ```ts
 * new LineSplitter(onLine, defaultMaxLineBytes / 4);
 * ```
 */
export const defaultMaxLineBytes = 64 * 1024 * 1024;

const newline = 10;
const carriageReturn = 13;

/**
 * Newline framing over raw bytes, for the watch stream. A line may span many chunks and a chunk
 * may hold many lines; each complete line is decoded exactly once, as a whole, so a UTF-8
 * character split across chunks decodes correctly. Empty lines are skipped.
 *
 * Cost: one native `indexOf` scan per chunk and one string per line; bytes of an unfinished line
 * are kept as chunk slices (no copy) and joined once when the line completes. A line longer than
 * `maxLineBytes` fails with ProtocolError `line-too-long` before it is buffered, so memory stays
 * bounded by `maxLineBytes` plus one chunk.
 *
 * ## Example
 * ```ts
 * const splitter = new LineSplitter((line) => events.push(JSON.parse(line)));
 * splitter.push(Buffer.from('{"a":1}\n{"b"'));
 * splitter.push(Buffer.from(':2}\n'));  // events: [{a:1}, {b:2}]
 * splitter.pendingBytes;               // 0: no partial line at the end of the stream
 * ```
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingLength = 0;
  private stopped = false;

  /**
   * @param onLine called once per complete, non-empty line, without its newline. May throw: the
   *   exception leaves `push` and the rest of that chunk is not scanned.
   * @param maxLineBytes the longest line accepted. Default 64 MiB.
   */
  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLineBytes: number = defaultMaxLineBytes,
  ) {}

  /** Bytes of an unfinished line held back; non-zero at the end of a stream means it was cut. */
  get pendingBytes(): number {
    return this.pendingLength;
  }

  /** The unfinished line so far, decoded, for error excerpts (at most 200 bytes). */
  pendingExcerpt(): string {
    return Buffer.concat(this.pending, this.pendingLength).toString('utf8', 0, Math.min(200, this.pendingLength));
  }

  /** Stops delivering lines, even from the rest of a chunk being scanned: for unsubscription. */
  stop(): void {
    this.stopped = true;
    this.pending = [];
    this.pendingLength = 0;
  }

  /** Feeds the next chunk of the stream. */
  push(chunk: Buffer): void {
    let start = 0;
    let end = chunk.indexOf(newline);
    if (end === -1) {
      this.hold(chunk);
      return;
    }
    if (this.pendingLength > 0) {
      this.checkLength(this.pendingLength + end);
      this.pending.push(chunk.subarray(0, end));
      const line = Buffer.concat(this.pending, this.pendingLength + end);
      this.pending = [];
      this.pendingLength = 0;
      this.emit(line, 0, line.length);
      start = end + 1;
      end = chunk.indexOf(newline, start);
    }
    while (end !== -1 && !this.stopped) {
      this.checkLength(end - start);
      this.emit(chunk, start, end);
      start = end + 1;
      end = chunk.indexOf(newline, start);
    }
    if (start < chunk.length && !this.stopped) this.hold(chunk.subarray(start));
  }

  private emit(bytes: Buffer, start: number, end: number): void {
    if (end > start && end - start === 1 && bytes[start] === carriageReturn) return;
    if (end > start && !this.stopped) this.onLine(bytes.toString('utf8', start, end));
  }

  private hold(bytes: Buffer): void {
    this.checkLength(this.pendingLength + bytes.length);
    this.pending.push(bytes);
    this.pendingLength += bytes.length;
  }

  private checkLength(length: number): void {
    if (length > this.maxLineBytes) {
      const excerpt = this.pendingLength > 0 ? this.pendingExcerpt() : undefined;
      this.pending = [];
      this.pendingLength = 0;
      throw new ProtocolError('line-too-long', `a watch line exceeds ${this.maxLineBytes} bytes`, excerpt);
    }
  }
}
