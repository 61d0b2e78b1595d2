// Preloaded into the headless CLI (node --require) by the kill harness. With
// FAULTS_KILL_AFTER_JOURNAL_SYNC=N the process SIGKILLs itself the instant its Nth fsync of a
// journal.jsonl returns: the Nth commit group (save point) is durable and nothing after it ran.
// With FAULTS_COUNT_FILE=path it appends one line per journal fsync there (to count save points).
// It always writes `faults:first-io` to stderr at the first file open, so that a random kill
// can be timed from the moment the run starts working rather than from process start-up.
'use strict';
const fs = require('node:fs');

const killAfter = Number(process.env.FAULTS_KILL_AFTER_JOURNAL_SYNC || 0);
const countFile = process.env.FAULTS_COUNT_FILE;
let syncs = 0;
let opened = false;

function onJournalSync() {
  syncs += 1;
  if (countFile) fs.appendFileSync(countFile, `${syncs}\n`);
  if (killAfter > 0 && syncs === killAfter) process.kill(process.pid, 'SIGKILL');
}

const open = fs.promises.open;
fs.promises.open = async function patchedOpen(path, ...rest) {
  if (!opened) {
    opened = true;
    process.stderr.write('faults:first-io\n');
  }
  const handle = await open.call(this, path, ...rest);
  if (String(path).endsWith('journal.jsonl')) {
    const sync = handle.sync.bind(handle);
    handle.sync = async () => {
      await sync();
      onJournalSync();
    };
  }
  return handle;
};
