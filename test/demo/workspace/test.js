'use strict';

const { greet } = require('./src/greet');

const cases = [
  [[], 'Hello, nobody!'],
  [['Ada'], 'Hello, Ada!'],
  [['Ada', 'Grace'], 'Hello, Ada and Grace!'],
  [['Ada', 'Grace', 'Linus'], 'Hello, Ada, Grace and Linus!'],
];

let failed = 0;
for (const [names, expected] of cases) {
  const actual = greet(names);
  if (actual === expected) {
    console.log('ok   ' + JSON.stringify(names));
  } else {
    failed += 1;
    console.log('FAIL ' + JSON.stringify(names) + ': expected ' + JSON.stringify(expected) + ', got ' + JSON.stringify(actual));
  }
}
console.log(failed === 0 ? 'all ' + cases.length + ' tests passed' : failed + ' of ' + cases.length + ' tests failed');
process.exit(failed === 0 ? 0 : 1);
