/**
 * The console's stylesheet: system fonts only, visible focus, readable contrast, no external resources.
 *
 * @example
 * ```ts
 * res.end(Buffer.from(CONSOLE_CSS, 'utf8')); // as /console/app.css, under CONSOLE_CSP
 * ```
 */
export const CONSOLE_CSS = `:root {
  color-scheme: light dark;
  --fg: #1b1f24;
  --muted: #57606a;
  --bg: #ffffff;
  --card: #f6f8fa;
  --line: #d0d7de;
  --accent: #0550ae;
  --approve: #116329;
  --deny: #a40e26;
  --focus: #bf8700;
  font-family: system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif;
  line-height: 1.5;
}
@media (prefers-color-scheme: dark) {
  :root {
    --fg: #e6edf3;
    --muted: #9da7b3;
    --bg: #0d1117;
    --card: #161b22;
    --line: #30363d;
    --accent: #79c0ff;
    --approve: #3fb950;
    --deny: #ff7b72;
    --focus: #e3b341;
  }
}
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: var(--bg); }
main { max-width: 72rem; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
.bar {
  display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 0.5rem 1rem;
  padding: 0.75rem 1.5rem; border-bottom: 1px solid var(--line);
}
h1 { font-size: 1.35rem; margin: 0; }
h2 { font-size: 1.15rem; margin: 2rem 0 0.75rem; }
h3 { font-size: 1rem; margin: 0 0 0.5rem; }
.who { display: flex; align-items: center; gap: 0.75rem; }
.skip { position: absolute; left: -999px; top: 0; }
.skip:focus { left: 0.5rem; top: 0.5rem; background: var(--bg); padding: 0.25rem 0.5rem; z-index: 1; }
.visually-hidden {
  position: absolute !important; width: 1px; height: 1px; overflow: hidden;
  clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap;
}
.status { min-height: 1.5em; margin: 0.5rem 0; font-weight: 600; }
.status.error { color: var(--deny); }
.notice, .empty { color: var(--muted); }
form { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 0.75rem; }
label { font-weight: 600; }
input[type='password'], textarea {
  font: inherit; color: inherit; background: var(--bg);
  border: 1px solid var(--muted); border-radius: 6px; padding: 0.4rem 0.6rem;
}
input[type='password'] { min-width: min(28rem, 100%); }
textarea { width: 100%; min-height: 5rem; resize: vertical; }
button {
  font: inherit; cursor: pointer; border-radius: 6px; padding: 0.35rem 0.9rem;
  border: 1px solid var(--line); background: var(--card); color: var(--fg);
}
button[disabled] { cursor: progress; opacity: 0.6; }
button.approve { background: var(--approve); border-color: var(--approve); color: #fff; }
button.deny { background: transparent; border-color: var(--deny); color: var(--deny); }
button.approve.confirm { background: var(--deny); border-color: var(--deny); font-weight: 700; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
button:focus, input:focus, textarea:focus, a:focus, [tabindex='-1']:focus { outline: 3px solid var(--focus); outline-offset: 2px; }
.cards { list-style: none; margin: 0; padding: 0; display: grid; gap: 1rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 1rem; }
.card dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; margin: 0 0 0.75rem; }
.card dt { color: var(--muted); }
.card.linked { border: 2px solid var(--focus); }
.card dd { margin: 0; overflow-wrap: anywhere; }
.card dd.id { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.card dd.request { white-space: pre-wrap; font-style: italic; }
.hints { color: var(--muted); margin-top: 1rem; }
.hints ul { margin: 0.25rem 0 0; padding-left: 1.25rem; }
.hints strong { color: var(--fg); }
pre {
  margin: 0 0 0.75rem; padding: 0.75rem; overflow: auto; max-height: 20rem;
  background: var(--bg); border: 1px solid var(--line); border-radius: 6px;
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.9rem;
  white-space: pre-wrap; overflow-wrap: anywhere;
}
.warning { margin: 0 0 0.5rem; padding: 0.5rem 0.75rem; border: 2px solid var(--deny); border-radius: 6px; }
.warning strong { color: var(--deny); }
pre.hidden-characters { border: 2px solid var(--deny); }
.actions { display: flex; gap: 0.75rem; flex-wrap: wrap; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: 0.92rem; }
th, td { text-align: left; padding: 0.35rem 0.6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td.id { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
[hidden] { display: none !important; }
`;
