/**
 * Summaries and plain-text tables for benchmark results.
 *
 * @example
 * ```ts
 * median([3, 1, 2]); // 2
 * renderTable(['a', 'b'], [['1', '2']]); // aligned columns, numbers right-aligned
 * ```
 */

/** The median; the mean of the middle two for an even count; NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function formatInt(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a';
}

export function formatMs(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) : 'n/a';
}

export function formatRatio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : 'n/a';
}

const NUMERIC = /^(?:n\/a|—|[\d.,×/ ]+)$/;

/** Columns padded to their widest cell; cells that look numeric are right-aligned. */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const numeric = header.map((_, column) => rows.every((row) => NUMERIC.test(row[column] ?? '')));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) => (numeric[column] ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  return [line(header), rule, ...rows.map(line)].join('\n');
}
