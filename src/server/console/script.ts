/**
 * The console's script, served as `/console/app.js`: plain JavaScript, `fetch` only, no
 * dependencies. Every string from the server goes into the page with `textContent` (never
 * `innerHTML`). The CSRF token lives in a variable of this script only; the session itself is
 * an HttpOnly cookie this script cannot read. Lists are updated by key, so a refresh every
 * 3 seconds neither steals focus nor wipes an answer being typed.
 */
export const CONSOLE_JS = `'use strict';
(function () {
  var REFRESH_MS = 3000;
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

  // ------------------------------------------------------------ approvals

  function field(list, label, value) {
    list.appendChild(el('dt', label));
    var dd = el('dd');
    if (value instanceof Node) dd.appendChild(value); else dd.textContent = String(value);
    list.appendChild(dd);
  }

  function approvalItem(approval) {
    var item = el('li', null, 'card approval');
    item.dataset.actionId = approval.actionId;
    var headingId = 'approval-' + approvalItems.size + '-' + Date.now();
    var heading = el('h3', approval.tool);
    heading.id = headingId;
    item.setAttribute('aria-labelledby', headingId);
    item.appendChild(heading);
    var facts = el('dl');
    field(facts, 'Agent', approval.agent);
    field(facts, 'Client', approval.client);
    field(facts, 'Level', approval.level + ' \\u2014 ' + approval.levelName + ': ' + approval.levelMeaning);
    field(facts, 'Expires', when(approval.expiresAt));
    field(facts, 'Requested', when(approval.createdAt));
    item.appendChild(facts);
    item.appendChild(el('p', 'Arguments (secrets and addresses are redacted):', 'label'));
    // The server's escaped text: invisible and bidi characters appear as \\uXXXX, never raw,
    // so what is read here is what runs. Without it (an older gateway), nothing is shown.
    var hidden = approval.hiddenCharacters === true;
    if (hidden) {
      var warning = el('p', null, 'warning');
      warning.setAttribute('role', 'alert');
      warning.appendChild(el('strong', '\u26A0 Hidden characters'));
      var warnings = Array.isArray(approval.warnings) ? approval.warnings : [];
      warning.appendChild(document.createTextNode(': ' + (warnings.length > 0 ? warnings.join(' ') :
        'the arguments contain invisible or direction-changing characters, shown escaped.')));
      item.appendChild(warning);
    }
    var args = el('pre', typeof approval.argsDisplay === 'string' ? approval.argsDisplay :
      '(the arguments cannot be shown safely; deny, or use a current console)', hidden ? 'args hidden-characters' : 'args');
    item.appendChild(args);
    var actions = el('div', null, 'actions');
    actions.appendChild(decisionButton(approval, 'approve', 'Approve'));
    actions.appendChild(decisionButton(approval, 'deny', 'Deny'));
    item.appendChild(actions);
    return item;
  }

  function decisionButton(approval, verb, label) {
    var button = el('button', label, verb);
    button.type = 'button';
    button.dataset.actionId = approval.actionId;
    button.dataset.decision = verb;
    button.setAttribute('aria-label', label + ' ' + approval.tool + ' (agent ' + approval.agent + ')');
    button.addEventListener('click', function () { decide(approval, verb, button); });
    return button;
  }

  function decide(approval, verb, button) {
    var item = approvalItems.get(approval.actionId);
    var buttons = item ? item.querySelectorAll('button') : [button];
    buttons.forEach(function (b) { b.disabled = true; });
    say((verb === 'approve' ? 'Approving ' : 'Denying ') + approval.tool + '\\u2026', false);
    call('POST', '/approvals/' + encodeURIComponent(approval.actionId) + '/' + verb).then(function (result) {
      if (result.status === 200) {
        say((verb === 'approve' ? 'Approved ' : 'Denied ') + approval.tool + '.', false);
      } else if (result.status === 401) {
        sessionEnded();
        return;
      } else {
        say(errorMessage(result.body, 'The decision was not recorded (HTTP ' + result.status + ').'), true);
        buttons.forEach(function (b) { b.disabled = false; });
      }
      return refresh();
    }, function () {
      say('Could not reach the gateway; the decision was not recorded.', true);
      buttons.forEach(function (b) { b.disabled = false; });
    });
  }

  function renderApprovals(approvals) {
    var list = byId('approvals');
    var seen = new Set();
    approvals.forEach(function (approval) {
      seen.add(approval.actionId);
      if (!approvalItems.has(approval.actionId)) {
        var item = approvalItem(approval);
        approvalItems.set(approval.actionId, item);
        list.appendChild(item);
      }
    });
    removeGone(approvalItems, seen, 'approvals-heading');
    byId('approvals-empty').hidden = approvals.length > 0;
    showLinkedAction();
  }

  // An approve_url (#action-<id>) opens the console on that action, once, after the first list.
  var linkedShown = false;
  function showLinkedAction() {
    if (linkedShown) return;
    linkedShown = true;
    var match = /^#action-([A-Za-z0-9_-]{1,64})$/.exec(window.location.hash);
    if (!match) return;
    var item = approvalItems.get(match[1]);
    if (!item) {
      say('That action is no longer waiting for your decision (decided, expired, or not yours).', true);
      return;
    }
    item.classList.add('linked');
    var heading = item.querySelector('h3');
    if (heading) {
      heading.tabIndex = -1;
      heading.focus();
    }
    item.scrollIntoView({ block: 'center' });
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

  // ------------------------------------------------------------ questions

  function questionItem(question) {
    var item = el('li', null, 'card question');
    item.dataset.questionId = question.questionId;
    answerCount += 1;
    var headingId = 'question-' + answerCount;
    var heading = el('h3', 'From ' + question.remoteAgent + ' (' + question.state + ')');
    heading.id = headingId;
    item.setAttribute('aria-labelledby', headingId);
    item.appendChild(heading);
    var facts = el('dl');
    field(facts, 'Agent', question.agent);
    field(facts, 'Task', question.taskId);
    field(facts, 'Expires', when(question.expiresAt));
    item.appendChild(facts);
    item.appendChild(el('p', 'The remote agent asks (untrusted text):', 'label'));
    item.appendChild(el('pre', question.question));
    var form = el('form');
    var answerId = 'answer-' + answerCount;
    var label = el('label', 'Your answer');
    label.htmlFor = answerId;
    var text = el('textarea');
    text.id = answerId;
    text.maxLength = MAX_ANSWER;
    text.required = true;
    var send = el('button', 'Send answer');
    send.type = 'submit';
    send.dataset.questionId = question.questionId;
    send.setAttribute('aria-label', 'Send answer to ' + question.remoteAgent);
    form.appendChild(label);
    form.appendChild(text);
    form.appendChild(send);
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      answer(question, text, send);
    });
    item.appendChild(form);
    return item;
  }

  function answer(question, text, send) {
    var value = text.value;
    if (value.length === 0 || value.length > MAX_ANSWER) {
      say('Write an answer of 1 to ' + MAX_ANSWER + ' characters.', true);
      text.focus();
      return;
    }
    send.disabled = true;
    say('Sending your answer\\u2026', false);
    call('POST', '/approvals/questions/' + encodeURIComponent(question.questionId) + '/answer', { text: value }).then(
      function (result) {
        send.disabled = false;
        if (result.status === 200) {
          say('Answer sent to ' + question.remoteAgent + '.', false);
          text.value = '';
        } else if (result.status === 401) {
          sessionEnded();
          return;
        } else {
          say(errorMessage(result.body, 'The answer was not recorded (HTTP ' + result.status + ').'), true);
        }
        return refresh();
      },
      function () {
        send.disabled = false;
        say('Could not reach the gateway; the answer was not sent.', true);
      },
    );
  }

  function renderQuestions(questions) {
    var list = byId('questions');
    var seen = new Set();
    questions.forEach(function (question) {
      seen.add(question.questionId);
      if (!questionItems.has(question.questionId)) {
        var item = questionItem(question);
        questionItems.set(question.questionId, item);
        list.appendChild(item);
      }
    });
    removeGone(questionItems, seen, 'questions-heading');
    byId('questions-empty').hidden = questions.length > 0;
  }

  // ------------------------------------------------------------ tables

  function cell(row, value, className) {
    var td = el('td', null, className);
    if (value instanceof Node) td.appendChild(value); else td.textContent = value === undefined || value === null ? '' : String(value);
    row.appendChild(td);
  }

  function renderTasks(tasks) {
    var key = JSON.stringify(tasks);
    if (key === lastTasks) return;
    lastTasks = key;
    var rows = tasks.map(function (task) {
      var row = el('tr');
      cell(row, task.taskId, 'id');
      cell(row, task.agent);
      cell(row, task.client);
      cell(row, task.state);
      cell(row, when(task.createdAt));
      cell(row, when(task.updatedAt));
      return row;
    });
    byId('tasks').replaceChildren.apply(byId('tasks'), rows);
    byId('tasks-table').hidden = tasks.length === 0;
    byId('tasks-empty').hidden = tasks.length > 0;
  }

  function renderAudit(rows) {
    var key = JSON.stringify(rows);
    if (key === lastAudit) return;
    lastAudit = key;
    var out = rows.map(function (entry) {
      var row = el('tr');
      cell(row, entry.type);
      cell(row, entry.outcome);
      cell(row, entry.reason);
      cell(row, entry.taskId, 'id');
      cell(row, when(typeof entry.time === 'string' ? entry.time : ''));
      return row;
    });
    byId('audit').replaceChildren.apply(byId('audit'), out);
    byId('audit-table').hidden = rows.length === 0;
    byId('audit-empty').hidden = rows.length > 0;
  }

  // ------------------------------------------------------------ refresh, sign-in

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

  function start() {
    byId('sign-in-form').addEventListener('submit', onSignIn);
    byId('sign-out').addEventListener('click', onSignOut);
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
})();
`;
