import { readFileSync } from 'node:fs';
import { Script } from './script';
import { startFakeAnthropic } from './server';

// Usage: tsx test/support/fake-anthropic/main.ts --script FILE [--port N]
// Prints the server URL on one line, then serves until SIGINT/SIGTERM.

function argValue(args: readonly string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const scriptFile = argValue(args, '--script');
  const portText = argValue(args, '--port') ?? '0';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be an integer 0-65535, got ${portText}`);
  const steps = scriptFile === undefined ? [] : parseScript(scriptFile);
  const server = await startFakeAnthropic(steps, { port });
  process.stdout.write(`${server.url}\n`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

function parseScript(file: string) {
  const result = Script.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!result.success) throw new Error(`bad script ${file}: ${result.error.message}`);
  return result.data;
}

main().catch((error: unknown) => {
  process.stderr.write(`fake-anthropic: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
});
