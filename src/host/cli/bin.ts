import { HELP, wantsHelp } from './help';

// The CLI's process entry (dist/cli.js). `--help` answers from here, before anything else loads;
// the rest loads on demand: the key handoff (a launcher with an API key in its environment only
// starts the CLI again without it), then the commands (main.ts).

async function launch(args: readonly string[], script: string): Promise<number> {
  const { receiveHandedKeys, relaunchWithoutKeys } = await import('./key-handoff');
  const relaunched = relaunchWithoutKeys(args, script);
  if (relaunched) return relaunched;
  await receiveHandedKeys();
  const { main } = await import('./main');
  return main(args);
}

const args = process.argv.slice(2);
if (wantsHelp(args)) process.stdout.write(`${HELP}\n`);
else {
  void launch(args, process.argv[1]!).then((code) => {
    process.exitCode = code;
  });
}
