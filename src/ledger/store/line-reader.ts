/** The lines of a byte range of a file, read in large chunks (the ledger file at start, and fsck). */
import type { FileHandle } from 'node:fs/promises';

export class LineReader {
  /** Bytes after the last line taken, once reading stops (a torn or unterminated last line). */
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
    let bytes = Buffer.alloc(0);
    let start = 0;
    try {
      while (this.position < this.to) {
        const { bytesRead } = await this.fh.read(buf, 0, Math.min(buf.length, this.to - this.position), this.position);
        if (bytesRead === 0) break;
        const tail = bytes.subarray(start);
        bytes = tail.length ? Buffer.concat([tail, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
        const base = this.position - tail.length;
        this.position += bytesRead;
        start = 0;
        for (let nl = bytes.indexOf(0x0a); nl >= 0; nl = bytes.indexOf(0x0a, start)) {
          const text = bytes.toString('utf8', start, nl);
          // moved past the line before it is handed out: a caller that stops here leaves `rest` after it
          start = nl + 1;
          yield { text, end: base + nl + 1 };
        }
        // the unfinished line is kept apart once per chunk: `buf` is overwritten by the next read
        bytes = Buffer.from(bytes.subarray(start));
        start = 0;
      }
    } finally {
      this.rest = Buffer.from(bytes.subarray(start));
    }
  }
}
