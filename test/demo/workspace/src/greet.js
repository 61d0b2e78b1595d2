'use strict';

/** Joins names as a person would say them: "Ada, Grace and Linus". */
function formatList(names) {
  if (names.length === 0) return 'nobody';
  if (names.length === 1) return names[0];
  const head = names.slice(0, names.length - 2);
  return head.join(', ') + ' and ' + names[names.length - 1];
}

function greet(names) {
  return 'Hello, ' + formatList(names) + '!';
}

module.exports = { greet, formatList };
