/**
 * The console's script, served as `/console/app.js`: plain JavaScript, `fetch` only, no
 * dependencies. Every string from the server goes into the page with `textContent` (never
 * `innerHTML`). The CSRF token lives in a variable of this script only; the session itself is
 * an HttpOnly cookie this script cannot read. Lists are updated by key, so a refresh every
 * 3 seconds neither steals focus nor wipes an answer being typed.
 *
 * One script in one function scope, written in three files to keep each readable: this one
 * (helpers, session, sign-in, refresh), `script-approvals.ts` (action cards, the L4
 * confirmation) and `script-lists.ts` (questions, tasks, audit).
 *
 * @example
 * ```ts
 * res.end(Buffer.from(CONSOLE_JS, 'utf8')); // as /console/app.js, under CONSOLE_CSP
 * ```
 */
import { CONSOLE_APPROVALS_JS } from './script-approvals.js';
import { CONSOLE_LISTS_JS } from './script-lists.js';

const CORE_JS = `  var REFRESH_MS = 3000;
  var MAX_ANSWER = 8192;
  var csrf = null;
  var timer = null;
  var loading = false;
  var lastTasks = '';
  var lastAudit = '';
  var answerCount = 0;
  var approvalItems = new Map();
  var questionItems = new Map();

  function byId(id) { return document.getElementById(id); }

  function el(tag, text, className) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  function say(message, isError) {
    var status = byId('status');
    status.textContent = message;
    status.className = isError ? 'status error' : 'status';
  }

  function when(iso) {
    var time = el('time', '');
    if (typeof iso !== 'string' || iso.length === 0) return time;
    time.dateTime = iso;
    var date = new Date(iso);
    time.textContent = isNaN(date.getTime()) ? iso : date.toLocaleString();
    time.title = iso;
    return time;
  }

  function errorMessage(body, fallback) {
    if (body && body.error && typeof body.error.message === 'string') return body.error.message;
    return fallback;
  }

  /** fetch, same origin, JSON in and out. Resolves with { status, body }. */
  function call(method, url, payload) {
    var headers = { accept: 'application/json' };
    var init = { method: method, headers: headers, credentials: 'same-origin', cache: 'no-store' };
    if (method !== 'GET') {
      if (csrf) headers['X-Airlock-CSRF'] = csrf;
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(payload === undefined ? {} : payload);
    }
    return fetch(url, init).then(function (response) {
      return response.text().then(function (text) {
        var body = null;
        try { body = text.length > 0 ? JSON.parse(text) : null; } catch (e) { body = null; }
        return { status: response.status, body: body };
      });
    });
  }

  function showSignedIn(userId) {
    byId('who-text').textContent = 'Signed in as ' + userId;
    byId('who').hidden = false;
    byId('sign-in').hidden = true;
    byId('signed-in').hidden = false;
    if (timer === null) timer = setInterval(refresh, REFRESH_MS);
  }

  function showSignedOut() {
    csrf = null;
    if (timer !== null) { clearInterval(timer); timer = null; }
    byId('who').hidden = true;
    byId('who-text').textContent = '';
    byId('signed-in').hidden = true;
    byId('sign-in').hidden = false;
    disarm(false);
    approvalItems.forEach(function (item) { item.remove(); });
    approvalItems.clear();
    questionItems.forEach(function (item) { item.remove(); });
    questionItems.clear();
    byId('tasks').replaceChildren();
    byId('audit').replaceChildren();
    lastTasks = '';
    lastAudit = '';
  }

  function sessionEnded() {
    showSignedOut();
    say('Your session has ended. Sign in again.', true);
    byId('token').focus();
  }

  function field(list, label, value) {
    list.appendChild(el('dt', label));
    var dd = el('dd');
    if (value instanceof Node) dd.appendChild(value); else dd.textContent = String(value);
    list.appendChild(dd);
    return dd;
  }

  /** Drops items no longer listed; focus inside one moves to the next item or the heading. */
  function removeGone(items, seen, headingId) {
    items.forEach(function (item, key) {
      if (seen.has(key)) return;
      var hadFocus = item.contains(document.activeElement);
      var next = item.nextElementSibling || item.previousElementSibling;
      item.remove();
      items.delete(key);
      if (hadFocus) {
        var target = next ? next.querySelector('button, textarea') : null;
        (target || byId(headingId)).focus();
      }
    });
  }
`;

const SESSION_JS = `  // ------------------------------------------------------------ refresh, sign-in

  var reachable = true;

  function refresh() {
    if (csrf === null || loading) return Promise.resolve();
    loading = true;
    return call('GET', '/console/api/overview').then(function (result) {
      loading = false;
      if (result.status === 401) { sessionEnded(); return; }
      if (result.status !== 200 || !result.body) {
        say(errorMessage(result.body, 'Could not load the console (HTTP ' + result.status + ').'), true);
        return;
      }
      if (!reachable) { reachable = true; say('Connected again.', false); }
      var body = result.body;
      renderApprovals(Array.isArray(body.approvals) ? body.approvals : []);
      renderQuestions(Array.isArray(body.questions) ? body.questions : []);
      renderTasks(Array.isArray(body.tasks) ? body.tasks : []);
      renderAudit(Array.isArray(body.audit) ? body.audit : []);
    }, function () {
      loading = false;
      if (reachable) { reachable = false; say('Could not reach the gateway; retrying.', true); }
    });
  }

  function signedIn(body, announce) {
    csrf = body.csrf;
    showSignedIn(body.userId);
    if (announce) {
      say('Signed in as ' + body.userId + '.', false);
      byId('approvals-heading').focus();
    }
    return refresh();
  }

  function onSignIn(event) {
    event.preventDefault();
    var input = byId('token');
    var token = input.value.trim();
    if (token.length === 0) {
      say('Enter your token or JWT.', true);
      input.focus();
      return;
    }
    var button = byId('sign-in-button');
    button.disabled = true;
    say('Signing in\\u2026', false);
    call('POST', '/console/session', { token: token }).then(function (result) {
      button.disabled = false;
      input.value = '';
      if (result.status === 200 && result.body) return signedIn(result.body, true);
      if (result.status === 429) say('Too many failed sign-ins from here; wait a minute and try again.', true);
      else if (result.status === 401) say('That token or JWT was not accepted.', true);
      else say(errorMessage(result.body, 'Sign-in failed (HTTP ' + result.status + ').'), true);
      input.focus();
    }, function () {
      button.disabled = false;
      say('Could not reach the gateway.', true);
    });
  }

  function onSignOut() {
    call('DELETE', '/console/session').then(function (result) {
      if (result.status === 200 || result.status === 401) {
        showSignedOut();
        say('Signed out.', false);
        byId('token').focus();
      } else {
        say(errorMessage(result.body, 'Sign-out failed (HTTP ' + result.status + ').'), true);
      }
    }, function () {
      say('Could not reach the gateway.', true);
    });
  }

  /** Where each person's token is kept (the startup banner's lines, never a token), under the form. */
  function loadTokenHints() {
    call('GET', '/console/api/sign-in').then(function (result) {
      var body = result.status === 200 ? result.body : null;
      var hints = body && Array.isArray(body.tokenHints) ? body.tokenHints : [];
      var items = hints.filter(function (hint) {
        return hint !== null && typeof hint.person === 'string' && typeof hint.where === 'string';
      }).map(function (hint) {
        var item = el('li');
        item.appendChild(el('strong', hint.person));
        item.appendChild(document.createTextNode(': token ' + hint.where));
        return item;
      });
      var list = byId('token-hint-list');
      list.replaceChildren.apply(list, items);
      byId('token-hints').hidden = items.length === 0;
    }, function () { /* the hint is a help, not needed to sign in */ });
  }

  function start() {
    byId('sign-in-form').addEventListener('submit', onSignIn);
    byId('sign-out').addEventListener('click', onSignOut);
    watchConfirmations();
    loadTokenHints();
    call('GET', '/console/session').then(function (result) {
      if (result.status === 200 && result.body) return signedIn(result.body, false);
      showSignedOut();
    }, function () {
      showSignedOut();
      say('Could not reach the gateway.', true);
    });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
`;

export const CONSOLE_JS = `'use strict';
(function () {
${CORE_JS}
${CONSOLE_APPROVALS_JS}
${CONSOLE_LISTS_JS}
${SESSION_JS}})();
`;
