/**
 * The console's HTML page. No inline script or style (the CSP forbids both): the behaviour is
 * in `/console/app.js`, the looks in `/console/app.css`. Without JavaScript the sign-in form
 * posts (never GETs, so a token cannot end up in a URL) and the page says that it needs it.
 * Under the form, the script lists where each person's token is kept (`/console/api/sign-in`).
 *
 * @example
 * ```ts
 * res.end(Buffer.from(CONSOLE_HTML, 'utf8')); // as /console, under CONSOLE_CSP
 * ```
 */
export const CONSOLE_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="referrer" content="no-referrer">
    <title>Airlock console</title>
    <link rel="icon" href="/console/favicon.svg" type="image/svg+xml">
    <link rel="stylesheet" href="/console/app.css">
    <script src="/console/app.js" defer></script>
  </head>
  <body>
    <a class="skip" href="#main">Skip to content</a>
    <header class="bar">
      <h1>Airlock console</h1>
      <div id="who" class="who" hidden>
        <span id="who-text"></span>
        <button type="button" id="sign-out">Sign out</button>
      </div>
    </header>
    <main id="main">
      <p id="status" class="status" role="status" aria-live="polite"></p>
      <noscript><p class="notice">The console needs JavaScript. The same actions are available with <code>airlock approvals</code> or the <code>/approvals</code> API.</p></noscript>

      <section id="sign-in" aria-labelledby="sign-in-heading">
        <h2 id="sign-in-heading">Sign in</h2>
        <p>Sign in with your own person token or JWT, never an agent's token.</p>
        <form id="sign-in-form" method="post" action="/console/session" autocomplete="off">
          <label for="token">Your token or JWT</label>
          <input id="token" name="token" type="password" autocomplete="current-password" spellcheck="false" required>
          <button type="submit" id="sign-in-button">Sign in</button>
        </form>
        <div id="token-hints" class="hints" hidden>
          <p id="token-hints-heading">Where each person's token is kept, on the gateway's host:</p>
          <ul id="token-hint-list" aria-labelledby="token-hints-heading"></ul>
        </div>
      </section>

      <div id="signed-in" hidden>
        <section aria-labelledby="approvals-heading">
          <h2 id="approvals-heading" tabindex="-1">Pending approvals</h2>
          <p id="approvals-empty" class="empty">No actions are waiting for your decision.</p>
          <ul id="approvals" class="cards"></ul>
        </section>

        <section aria-labelledby="questions-heading">
          <h2 id="questions-heading" tabindex="-1">Questions from remote agents</h2>
          <p id="questions-empty" class="empty">No remote agent is waiting for your answer.</p>
          <ul id="questions" class="cards"></ul>
        </section>

        <section aria-labelledby="tasks-heading">
          <h2 id="tasks-heading">Recent tasks</h2>
          <p id="tasks-empty" class="empty">No tasks yet.</p>
          <div class="scroll">
            <table id="tasks-table">
              <caption class="visually-hidden">Recent tasks of the clients you answer for, newest first</caption>
              <thead>
                <tr><th scope="col">Task</th><th scope="col">Agent</th><th scope="col">Client</th><th scope="col">State</th><th scope="col">Created</th><th scope="col">Updated</th></tr>
              </thead>
              <tbody id="tasks"></tbody>
            </table>
          </div>
        </section>

        <section aria-labelledby="audit-heading">
          <h2 id="audit-heading">Audit</h2>
          <p id="audit-empty" class="empty">No audit rows yet.</p>
          <div class="scroll">
            <table id="audit-table">
              <caption class="visually-hidden">Latest audit rows about your tasks and decisions, newest first</caption>
              <thead>
                <tr><th scope="col">Type</th><th scope="col">Outcome</th><th scope="col">Reason</th><th scope="col">Task</th><th scope="col">Time</th></tr>
              </thead>
              <tbody id="audit"></tbody>
            </table>
          </div>
        </section>
      </div>
    </main>
  </body>
</html>
`;
