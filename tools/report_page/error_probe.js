// The page's own error detector, inlined first in <head> so that it sees every later script:
// uncaught exceptions (syntax errors of later <script> elements included), unhandled promise
// rejections and console.error calls are recorded. The count goes to
// <html data-page-errors="N"> and the messages into the #page-errors box, which a reader sees
// at the top of the page and the browser test reads from the dumped DOM.
(function () {
  'use strict';
  var errors = [];
  var root = document.documentElement;
  root.setAttribute('data-page-errors', '0');

  function show() {
    var box = document.getElementById('page-errors');
    if (!box || errors.length === 0) return;
    box.hidden = false;
    box.textContent = 'This page hit ' + errors.length + ' error(s) while rendering:\n' +
        errors.join('\n');
  }

  function record(kind, text) {
    errors.push(kind + ': ' + text);
    root.setAttribute('data-page-errors', String(errors.length));
    show();
  }

  window.addEventListener('error', function (e) {
    var where = e.filename ? ' (' + e.filename.split('/').pop() + ':' + e.lineno + ')' : '';
    record('uncaught', (e.message || String(e.error)) + where);
  });
  window.addEventListener('unhandledrejection', function (e) {
    record('unhandled rejection', String(e.reason));
  });
  var consoleError = console.error;
  console.error = function () {
    record('console.error', Array.prototype.map.call(arguments, String).join(' '));
    return consoleError.apply(console, arguments);
  };
  // Errors recorded before <body> existed are shown once the box is there.
  document.addEventListener('DOMContentLoaded', show);
})();
