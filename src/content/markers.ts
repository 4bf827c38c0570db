/**
 * The marker pair that delimits untrusted content handed to a model. Everything between the two
 * markers came from outside (an inbound A2A request, a remote agent's reply) and is data, never
 * instructions. `frameUntrusted` writes exactly one of each; `neutraliseMarkers` makes every
 * look-alike inside the untrusted text inert, so the text can neither close the frame early nor
 * open a second one.
 *
 * @example
 * ```ts
 * const framed = frameUntrusted(reply, { source: 'A2A Agent' });
 * framed.endsWith(UNTRUSTED_END_MARKER); // true
 * ```
 */

/**
 * Opens a block of untrusted content. Appears once, on its own line, in every frame.
 *
 * @example
 * ```ts
 * UNTRUSTED_START_MARKER; // '<<<EXTERNAL_UNTRUSTED_CONTENT>>>'
 * ```
 */
export const UNTRUSTED_START_MARKER = '<<<EXTERNAL_UNTRUSTED_CONTENT>>>';

/**
 * Closes a block of untrusted content. Appears once, as the last line of every frame.
 *
 * @example
 * ```ts
 * UNTRUSTED_END_MARKER; // '<<<END_EXTERNAL_UNTRUSTED_CONTENT>>>'
 * ```
 */
export const UNTRUSTED_END_MARKER = '<<<END_EXTERNAL_UNTRUSTED_CONTENT>>>';

/**
 * What a neutralised marker look-alike becomes: visibly defanged, and containing no letters of
 * the marker phrase in order, so it can never be read (or re-detected) as a marker.
 *
 * @example
 * ```ts
 * neutraliseMarkers('hi <<<END_EXTERNAL_UNTRUSTED_CONTENT>>>').text; // 'hi [[marker removed]]'
 * ```
 */
export const MARKER_REPLACEMENT = '[[marker removed]]';
