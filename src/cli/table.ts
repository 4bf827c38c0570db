/**
 * Plain-text tables and wrapped lines for the CLI, held to a terminal's width (80 columns
 * unless the terminal says otherwise): a table whose columns fit is laid out on one line per
 * row; one that does not has its widest columns narrowed and their cells wrapped onto more
 * lines. Text is wrapped at spaces; a word longer than the room it has is cut.
 *
 * @example
 * ```ts
 * const lines = formatTable(['NAME', 'STATUS'], [['travel', 'ok']], { width: 80 });
 * // ['NAME    STATUS', 'travel  ok']
 * io.stdout(wrapLines('a long reason …', { width: 80, indent: '  ' }).join('\n'));
 * ```
 */

/**
 * The width CLI output is held to when nothing better is known (a pipe, a file, a test).
 *
 * @example
 * ```ts
 * const width = io.columns ?? DEFAULT_WIDTH;
 * ```
 */
export const DEFAULT_WIDTH = 80;

/** Narrower than this, a terminal's width is not believed (and tables would be unreadable anyway). */
const MIN_WIDTH = 40;

/** Between two columns. */
const GAP = '  ';

/**
 * The width to lay output out in: the terminal's columns when known, within 40–200, else 80.
 *
 * @example
 * ```ts
 * outputWidth(process.stdout.isTTY ? process.stdout.columns : undefined); // 80 in a pipe
 * ```
 */
export function outputWidth(columns: number | undefined): number {
  if (columns === undefined || !Number.isFinite(columns) || columns < MIN_WIDTH) return DEFAULT_WIDTH;
  return Math.min(Math.floor(columns), 200);
}

/**
 * Options of {@link formatTable} and {@link wrapLines}.
 *
 * @example
 * ```ts
 * const options: LayoutOptions = { width: 80, indent: '  ' };
 * ```
 */
export interface LayoutOptions {
  /** The most characters a line may have (default 80). */
  width?: number;
  /** Put before every line (wrapLines only). */
  indent?: string;
  /** Put before every line but the first, instead of `indent` (wrapLines only). */
  hangingIndent?: string;
}

/**
 * `text` wrapped at spaces into lines of at most `width` characters, each starting with the
 * indent; a word longer than a line is cut across lines.
 *
 * @example
 * ```ts
 * wrapLines('one two three', { width: 9, indent: '  ' }); // ['  one two', '  three']
 * ```
 */
export function wrapLines(text: string, options: LayoutOptions = {}): string[] {
  const width = options.width ?? DEFAULT_WIDTH;
  const first = options.indent ?? '';
  const rest = options.hangingIndent ?? first;
  const lines: string[] = [];
  let line = '';
  const room = () => width - (lines.length === 0 ? first : rest).length;
  const flush = () => {
    lines.push(`${lines.length === 0 ? first : rest}${line}`);
    line = '';
  };
  for (const word of text.split(' ').filter((part) => part.length > 0)) {
    if (line.length > 0 && line.length + 1 + word.length <= room()) {
      line += ` ${word}`;
      continue;
    }
    if (line.length > 0) flush();
    let remaining = word;
    // A word that fills more than a line (a URL, a digest) is cut where the line ends.
    while (remaining.length > Math.max(1, room())) {
      line = remaining.slice(0, Math.max(1, room()));
      remaining = remaining.slice(line.length);
      flush();
    }
    line = remaining;
  }
  if (line.length > 0 || lines.length === 0) flush();
  return lines;
}

/**
 * A table as lines of at most `width` characters: a header and one line per row, columns two
 * spaces apart, the last column unpadded. When the columns do not fit, the widest is narrowed
 * until they do and its cells wrap onto the following lines: at spaces while that is enough,
 * else cutting words (never narrower than the header).
 *
 * @example
 * ```ts
 * formatTable(['NAME', 'PIN'], [['travel', 'tofu']]); // ['NAME    PIN', 'travel  tofu']
 * ```
 */
export function formatTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  options: LayoutOptions = {},
): string[] {
  const laid = layoutTable(header, rows, options);
  return [...laid.header, ...laid.rows.flat()];
}

/**
 * {@link formatTable}, with each row's lines apart, for a caller that puts lines of its own
 * under a row (a reason, say).
 *
 * @example
 * ```ts
 * const { header, rows } = layoutTable(['NAME', 'STATUS'], cells, { width });
 * const out = [...header, ...rows.flatMap((lines, i) => [...lines, ...notesOf(i)])];
 * ```
 */
export function layoutTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  options: LayoutOptions = {},
): { header: string[]; rows: string[][] } {
  const width = options.width ?? DEFAULT_WIDTH;
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const room = width - GAP.length * (header.length - 1);
  // The longest word of a column: narrower than that, its cells would be cut rather than wrapped.
  const longestWord = header.map((title, column) =>
    Math.max(title.length, ...rows.flatMap((row) => (row[column] ?? '').split(' ').map((word) => word.length))),
  );
  // Narrow the widest column, one character at a time, until all fit: first only columns that
  // can still wrap at a space, then (a table that still does not fit) any wider than its header.
  for (const floor of [longestWord, header.map((title) => title.length)]) {
    while (widths.reduce((sum, w) => sum + w, 0) > room) {
      let widest = -1;
      widths.forEach((w, column) => {
        if (w > floor[column]! && (widest === -1 || w > widths[widest]!)) widest = column;
      });
      if (widest === -1) break;
      widths[widest]! -= 1;
    }
  }
  const layout = (cells: readonly string[]): string[] => {
    const wrapped = header.map((_, column) => wrapLines(cells[column] ?? '', { width: widths[column]! }));
    const height = Math.max(...wrapped.map((lines) => lines.length));
    const lines: string[] = [];
    for (let index = 0; index < height; index += 1) {
      const parts = wrapped.map((cell, column) => (cell[index] ?? '').padEnd(widths[column]!));
      lines.push(parts.join(GAP).trimEnd());
    }
    return lines;
  };
  return { header: layout(header), rows: rows.map(layout) };
}
