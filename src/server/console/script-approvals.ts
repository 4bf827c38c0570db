/**
 * Part of the console's script (see script.ts, which puts the parts in one function scope): the
 * cards of actions waiting for a decision, Approve / Deny, and the second click an irreversible
 * (L4) approval needs. Untrusted strings (the tool, arguments, the caller's request) go into the
 * page with `textContent` only.
 *
 * @example
 * ```ts
 * const script = `(function () {\n${CORE}${CONSOLE_APPROVALS_JS}${REST}})();`;
 * ```
 */
export const CONSOLE_APPROVALS_JS = `  function approvalItem(approval) {
    var item = el('li', null, 'card approval');
    item.dataset.actionId = approval.actionId;
    var headingId = 'approval-' + approvalItems.size + '-' + Date.now();
    var heading = el('h3', approval.tool);
    heading.id = headingId;
    item.setAttribute('aria-labelledby', headingId);
    item.appendChild(heading);
    var facts = el('dl');
    field(facts, 'Task', approval.taskId).className = 'id';
    field(facts, 'Agent', approval.agent);
    field(facts, 'Caller', approval.client);
    // The caller's own words (first line, scrubbed by the gateway): untrusted, so text only.
    if (typeof approval.request === 'string' && approval.request.length > 0) {
      field(facts, 'Request', approval.request).className = 'request';
    }
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
    button.addEventListener('click', function (event) { onDecisionClick(approval, verb, button, event); });
    return button;
  }

  // An irreversible (L4) approval takes two separate clicks: the first turns the button into a
  // confirmation and only a second one within CONFIRM_MS sends the decision. The second click of
  // a double-click (event.detail > 1) is one gesture, not a confirmation. A click elsewhere,
  // Escape or the timeout puts the button back. Denials and L1-L3 stay one click.
  var CONFIRM_MS = 6000;
  var armed = null;

  function onDecisionClick(approval, verb, button, event) {
    if (verb !== 'approve' || approval.level !== 'L4') {
      disarm(false);
      decide(approval, verb, button);
    } else if (armed !== null && armed.button === button) {
      if (event.detail > 1) return;
      disarm(false);
      decide(approval, verb, button);
    } else if (event.detail <= 1) {
      arm(approval, button);
    }
  }

  function arm(approval, button) {
    disarm(false);
    var text = 'Confirm: approve ' + approval.tool + ' (irreversible)';
    armed = {
      button: button,
      label: button.textContent,
      ariaLabel: button.getAttribute('aria-label'),
      timer: setTimeout(function () { disarm(true); }, CONFIRM_MS),
    };
    button.textContent = text;
    button.setAttribute('aria-label', text + ' (agent ' + approval.agent + ')');
    button.classList.add('confirm');
    say(approval.tool + ' cannot be undone: press \\u201CConfirm\\u201D within ' + CONFIRM_MS / 1000 +
      ' seconds to approve it.', false);
  }

  function disarm(announce) {
    if (armed === null) return;
    var was = armed;
    armed = null;
    clearTimeout(was.timer);
    was.button.textContent = was.label;
    was.button.setAttribute('aria-label', was.ariaLabel);
    was.button.classList.remove('confirm');
    if (announce) say('Not approved: the confirmation timed out.', false);
  }

  /** Called once at start: a click anywhere but the armed button, or Escape, disarms it. */
  function watchConfirmations() {
    document.addEventListener('click', function (event) {
      if (armed !== null && !armed.button.contains(event.target)) disarm(false);
    }, true);
    document.addEventListener('keydown', function (event) {
      if (event.key === 'Escape') disarm(false);
    });
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
`;
