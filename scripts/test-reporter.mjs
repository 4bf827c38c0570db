// The spec reporter, minus the run's closing summary: scripts/run-tests.mjs runs the test files in
// two groups and prints one summary for both, so a reader (or CI) sees one set of totals. The
// totals and each file's duration go to the JSON file named by AIRLOCK_TEST_SUMMARY.
import { writeFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { spec as SpecReporter } from 'node:test/reporters';

const SUMMARY_LINE = /^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) ([\d.]+)$/;

export default async function* airlockReporter(source) {
  const totals = {};
  const files = {};
  async function* withoutSummary() {
    for await (const event of source) {
      const data = event.data ?? {};
      if (event.type === 'test:diagnostic' && data.file === undefined) {
        const match = SUMMARY_LINE.exec(String(data.message));
        if (match) {
          totals[match[1]] = Number(match[2]);
          continue;
        }
      }
      if (event.type === 'test:complete' && data.nesting === 0 && data.name === data.file) {
        files[data.file] = Math.round(data.details?.duration_ms ?? 0);
      }
      yield event;
    }
  }
  yield* Readable.from(withoutSummary()).pipe(new SpecReporter());
  const out = process.env.AIRLOCK_TEST_SUMMARY;
  if (out) writeFileSync(out, JSON.stringify({ totals, files }));
}
