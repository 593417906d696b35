/**
 * Text held in the pieces it arrived in, addressed by offsets counted from the first piece ever
 * added: the list decoder's window on a response, from the first item not yet handed over to the
 * end of what has arrived. Pieces are never copied or joined until `text` asks for a stretch;
 * dropping what lies before an offset drops whole pieces.
 *
 * ## Example
 * ```ts
 * const held = new HeldText();
 * held.push('{"a":1},{"');
 * held.push('a":2}');
 * held.indexOf('},{"a":', 0); // 6: across the two pieces
 * held.text(0, 7);            // '{"a":1}'
 * ```
 */
export class HeldText {
  private pieces: string[] = [];
  private starts: number[] = [];
  private endOffset = 0;

  /** The offset just past the last character held. */
  get end(): number {
    return this.endOffset;
  }

  /** How many pieces are held; `piece(i)` and `start(i)` for i below it. */
  get count(): number {
    return this.pieces.length;
  }

  piece(index: number): string {
    return this.pieces[index]!;
  }

  /** The offset of the first character of piece `index`. */
  start(index: number): number {
    return this.starts[index]!;
  }

  push(text: string): void {
    if (text.length === 0) return;
    this.pieces.push(text);
    this.starts.push(this.endOffset);
    this.endOffset += text.length;
  }

  /** The index of the piece holding `offset`, or `count` when the offset is past the end. */
  pieceAt(offset: number): number {
    let index = this.starts.length - 1;
    while (index > 0 && this.starts[index]! > offset) index--;
    return index < 0 || offset >= this.endOffset ? this.pieces.length : index;
  }

  /** The text between two offsets (a rope of slices of the pieces). */
  text(from: number, to: number): string {
    let text = '';
    for (let index = this.pieceAt(from); index < this.pieces.length && this.starts[index]! < to; index++) {
      const base = this.starts[index]!;
      const piece = this.pieces[index]!;
      text += from <= base && to >= base + piece.length ? piece : piece.slice(Math.max(0, from - base), to - base);
    }
    return text;
  }

  /** The first occurrence of `pattern` starting at or after `from`, across pieces too, or -1. */
  indexOf(pattern: string, from: number): number {
    const overlap = pattern.length - 1;
    for (let index = this.pieceAt(from); index < this.pieces.length; index++) {
      const piece = this.pieces[index]!;
      const base = this.starts[index]!;
      const local = Math.max(0, from - base);
      const at = piece.indexOf(pattern, local);
      if (at !== -1) return base + at;
      // An occurrence that begins in this piece and ends in the next ones.
      const seamFrom = base + Math.max(local, piece.length - overlap);
      if (index + 1 < this.pieces.length && seamFrom < base + piece.length) {
        const seam = this.text(seamFrom, Math.min(this.endOffset, base + piece.length + overlap)).indexOf(pattern);
        if (seam !== -1) return seamFrom + seam;
      }
    }
    return -1;
  }

  /** Drops the pieces that end at or before `offset`. */
  dropBefore(offset: number): void {
    let drop = 0;
    while (drop < this.pieces.length - 1 && this.starts[drop + 1]! <= offset) drop++;
    if (drop > 0) {
      this.pieces.splice(0, drop);
      this.starts.splice(0, drop);
    }
  }

  /** Empties the window, returning what follows `offset` (its pieces, the first one cut). */
  takeAfter(offset: number): string[] {
    const index = this.pieceAt(offset);
    const rest = index === this.pieces.length ? [] : [this.pieces[index]!.slice(offset - this.starts[index]!), ...this.pieces.slice(index + 1)];
    this.pieces = [];
    this.starts = [];
    return rest;
  }
}
