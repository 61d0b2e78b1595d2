// What the e2e stories share: phases that name themselves in a failure, polling, and a workbench
// whose agent talks to a fake Messages API.
import { openWorkbench, type Workbench } from './workbench';

/** Runs one phase of a story; a failure names the phase. */
export async function phase(name: string, run: () => Promise<void>): Promise<void> {
  console.log(`      phase: ${name}`);
  try {
    await run();
  } catch (error) {
    throw new Error(`${name}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

export async function waitUntil(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A workbench on a copy of the demo workspace (plus `files`), its agent on the fake model at `modelUrl`; more user `settings`. */
export function openAgentWorkbench(
  modelUrl: string,
  files: Record<string, string> = {},
  settings: Record<string, unknown> = {},
): Promise<Workbench> {
  return openWorkbench({
    files,
    env: { ANTHROPIC_API_KEY: 'sk-ant-e2e-not-a-real-key' },
    settings: {
      'agentCheckpoints.provider': 'anthropic',
      'agentCheckpoints.baseUrl': modelUrl,
      'agentCheckpoints.model': 'claude-e2e-test',
      'editor.codeLens': true,
      ...settings,
    },
  });
}
