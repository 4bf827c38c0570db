/**
 * Part of the console's script (see script.ts, which puts the parts in one function scope):
 * remote agents' questions with an answer box, and the tasks and audit tables.
 *
 * @example
 * ```ts
 * const script = `(function () {\n${CORE}${CONSOLE_LISTS_JS}${REST}})();`;
 * ```
 */
export const CONSOLE_LISTS_JS = `  // ------------------------------------------------------------ questions

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
`;
