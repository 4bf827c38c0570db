/**
 * The message texts `npm run bench:inbound -- --text KIND` sends: `hello` (the default), or
 * 4,000 characters of prose in one of four scripts, for what the content checks cost per
 * character (the inbound scan, marker neutralisation, the reply scrub, UTF-8 at the edges).
 *
 * @example
 * ```ts
 * messageText('cyrillic-4k').length; // 4000
 * ```
 */

export const TEXT_KINDS = ['hello', 'ascii-4k', 'latin-4k', 'cyrillic-4k', 'chinese-4k'] as const;
export type TextKind = (typeof TEXT_KINDS)[number];

const PROSE: Readonly<Record<Exclude<TextKind, 'hello'>, string>> = {
  'ascii-4k': 'The quick brown fox jumps over the lazy dog. ',
  'latin-4k': 'Café déjà vu — naïve façade, coöperate. ',
  'cyrillic-4k': 'Привет, как дела? Это тестовое сообщение. ',
  'chinese-4k': '这是一个测试消息，我们正在检查性能。',
};

/** The text of a kind: 'hello', or its prose repeated to 4,000 UTF-16 units. */
export function messageText(kind: TextKind): string {
  if (kind === 'hello') return 'hello';
  const prose = PROSE[kind];
  return prose.repeat(Math.ceil(4_000 / prose.length)).slice(0, 4_000);
}

/** Parses `--text`: a kind, or undefined for anything else. */
export function parseTextKind(value: string): TextKind | undefined {
  return (TEXT_KINDS as readonly string[]).includes(value) ? (value as TextKind) : undefined;
}
