/**
 * A module backend: a glossary agent written as an ordinary TypeScript function. Airlock imports
 * it (`backend: { type: module, module: examples/module/glossary.ts }`), calls the default export
 * with the config's `options`, and puts every inbound guard in front of it.
 *
 * In your own project, import the types from the package: `from 'a2a-airlock'`.
 *
 * Run it: npm install && npx tsx src/cli/main.ts serve --config examples/module.yaml
 */
import type { AgentBackend, AgentEvent, AgentTurn, BackendContext } from '../../src/index.js';
import { isAborted, pause, textOf } from '../../src/index.js';

export interface GlossaryOptions {
  /** Term → definition. */
  terms?: Record<string, string>;
  /** Pause between streamed sentences, to show streaming (milliseconds). */
  chunkDelayMs?: number;
}

/**
 * Makes the glossary backend. A known term is answered in streamed chunks; an unknown one is
 * answered with a question (the task waits in input-required until the caller names a term).
 *
 * @example
 * ```ts
 * const backend = createGlossary({ terms: { card: 'The JSON document that describes an agent.' } });
 * ```
 */
export default function createGlossary(options: GlossaryOptions, context?: BackendContext): AgentBackend {
  const terms = new Map(Object.entries(options.terms ?? {}).map(([term, text]) => [term.toLowerCase(), text]));
  const delay = options.chunkDelayMs ?? 0;
  return {
    kind: 'glossary',
    async *run(turn: AgentTurn): AsyncGenerator<AgentEvent> {
      const asked = textOf(turn.message)
        .trim()
        .toLowerCase()
        .replace(/[?.!]+$/, '');
      const definition = terms.get(asked);
      if (definition === undefined) {
        // Log counts and ids, never what the caller wrote.
        context?.log?.('info', 'glossary_unknown_term', { chars: asked.length });
        yield { type: 'input-required', question: `I know these terms: ${[...terms.keys()].join(', ')}. Which one?` };
        return;
      }
      yield { type: 'working', text: `Looking up "${asked}"` };
      const sentences = definition.match(/[^.!?]+[.!?]*\s*/g) ?? [definition];
      for (const [index, sentence] of sentences.entries()) {
        if (delay > 0 && !(await pause(delay, turn.signal))) return;
        if (isAborted(turn)) return;
        yield { type: 'text', text: sentence, last: index === sentences.length - 1 };
      }
      yield { type: 'completed' };
    },
  };
}
