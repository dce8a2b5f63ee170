/** The lines of a byte range of a file, read in large chunks (the ledger file at start, and fsck). */
import type { FileHandle } from 'node:fs/promises';

export class LineReader {
  /** Bytes after the last newline of the range, once the lines are read (a torn or unterminated last line). */
  rest: Buffer = Buffer.alloc(0);
  /** How far the file has been read. */
  position: number;

  constructor(
    private readonly fh: FileHandle,
    from: number,
    private readonly to: number,
    private readonly chunk: number,
  ) {
    this.position = from;
  }

  /** Each whole line's text and the offset just past its newline; stop early with `break`. */
  async *lines(): AsyncGenerator<{ text: string; end: number }> {
    const buf = Buffer.allocUnsafe(this.chunk);
    while (this.position < this.to) {
      const { bytesRead } = await this.fh.read(buf, 0, Math.min(buf.length, this.to - this.position), this.position);
      if (bytesRead === 0) break;
      const bytes = this.rest.length ? Buffer.concat([this.rest, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
      const base = this.position - this.rest.length;
      this.position += bytesRead;
      let start = 0;
      for (let nl = bytes.indexOf(0x0a); nl >= 0; nl = bytes.indexOf(0x0a, start)) {
        // set before yielding: a caller that stops here leaves `rest` at the line it did not take
        this.rest = Buffer.from(bytes.subarray(nl + 1));
        yield { text: bytes.toString('utf8', start, nl), end: base + nl + 1 };
        start = nl + 1;
      }
      this.rest = Buffer.from(bytes.subarray(start));
    }
  }
}
