// The CLI's help text and when to print it: imports nothing, so that `--help` (bin.ts) loads no
// other module. The README shows HELP as it is (test/unit/cli/readme.test.ts).

export const USAGE = `usage:
  agent-checkpoints run --workspace DIR [--store DIR] --task TEXT [--model ID] [--yes] [--trust]
                        [--provider anthropic|replay] [--replay FILE] [--base-url URL] [LIMITS] [--thinking off|adaptive|N] [OUTPUT]
                        [--mcp-config FILE] [SANDBOX] [--detach] (--detach: queue the run for a worker and exit 0)
  agent-checkpoints resume --workspace DIR [--store DIR] [--run ID] [--yes] [--trust] [--provider ...] [--replay FILE] [--base-url URL]
                        [--mcp-config FILE] [SANDBOX] [LIMITS] [OUTPUT] (a paused run continues with the raised limits; its counters are kept)
  agent-checkpoints continue --workspace DIR [--store DIR] --run ID --task TEXT [--yes] [--trust] [--provider ...] [--replay FILE]
                        [--base-url URL] [--mcp-config FILE] [SANDBOX] [LIMITS] [OUTPUT] (a new instruction for a stopped run)
  agent-checkpoints fork --workspace DIR [--store DIR] --run ID --step N [--files keep|restore] [--trust] [--json]
                        (a new run, paused, whose history is the run's up to the start of step N; the run stays as it was)
  SANDBOX: [--no-sandbox] [--command-network allowlist|on|off] [--allow-host HOST]... [--allow-workspace-mcp NAME]...
           [--pass-env NAME]... [--shell PROGRAM]
  LIMITS: [--max-turns N] [--max-tokens N] [--max-cost-usd X] [--max-context-tokens N]
  OUTPUT: [--json | --quiet] (default: the model's words as they stream, and one line per call)
  agent-checkpoints status [--store DIR] [--workspace DIR] [--run ID] [--json]
  agent-checkpoints worker --store postgres://... --workspace DIR [--concurrency N] [--exit-when-idle] [--yes] [--trust]
                        [--provider ...] [--replay FILE] [--base-url URL] [--mcp-config FILE] [SANDBOX] [OUTPUT]
run, resume, continue, fork and worker act only in a trusted workspace: --trust (this run), or the folder listed in
  $XDG_CONFIG_HOME/agent-checkpoints/trusted-workspaces (default ~/.config/...; one absolute path per line).
exit codes: 0 completed, 1 failed, 2 bad usage or input (an untrusted workspace too), 3 paused`;

/** Every flag, described once: `--help` prints these lines and the README shows them as they are. */
export const FLAG_HELP = `options:
  --workspace DIR           the folder the agent works in (run, resume; status finds its runs)
  --store DIR|URL           the run store: a folder, or a PostgreSQL server (postgres://user@host:port/db);
                            default: the extension's store of the workspace (printed as "store: ...")
  --task TEXT               what the agent should do (run), or the new instruction (continue)
  --model ID                the Claude model (run); default: the extension's default model
  --yes                     approve calls whose policy is "ask"; never a re-run of a call whose outcome is unknown
  --trust                   trust the workspace for this invocation (run, resume)
  --provider P              anthropic (default) or replay
  --replay FILE             recorded model turns for --provider replay
  --base-url URL            Messages API address (a proxy or a test server); default: Anthropic's
  --max-turns N             stop after N model calls (default 50); on resume and continue, raise the run's limit to N
  --max-tokens N            stop after N input + output tokens in all
  --max-cost-usd X          stop once the run has cost X US dollars
  --max-context-tokens N    the context budget: older history is compacted before a request would pass it
  --thinking off|adaptive|N extended thinking (run): off (default), adaptive, or a budget of N >= 1024 tokens per call;
                            on claude-sonnet-5-5, which cannot turn thinking off, off sends its lowest setting (between_tools:
                            no thinking before the first tool call) and a budget means adaptive; the words between tool calls stream as text
  --mcp-config FILE         MCP servers (mcp.json shape: {"servers": {...}}) whose tools the agent may call (run, resume);
                            the workspace's .vscode/mcp.json is read too, in a trusted workspace only
  --allow-workspace-mcp NAME  start the server NAME of the workspace's .vscode/mcp.json without asking (repeatable);
                            otherwise each asks once on a terminal (remembered for that exact configuration), and none starts without one
  --no-sandbox              run commands and MCP servers without the sandbox (bubblewrap on Linux; default: sandboxed where available)
  --command-network M       network for commands and MCP servers in the sandbox: allowlist (default: HTTP(S) through a
                            proxy to the hosts your ~/.npmrc, pip user config and git --global config name, and --allow-host),
                            on (any host and the machine's own ports, as before) or off
  --allow-host HOST         a host commands may reach through the proxy (port 443, or 80 for http://); HOST:PORT for another
                            port (repeatable); loopback and private addresses only when named so
  --pass-env NAME           a variable of this environment that commands and MCP servers get besides the base set (PATH, HOME,
                            LANG, TERM, the toolchains'...); a pattern (*, ?) passes no credential-like name (repeatable)
  --shell PROGRAM           Windows: the shell of commands, cmd.exe or a PowerShell (pwsh.exe, powershell.exe); default %ComSpec%
  --instruction-files LIST  the project's instruction files read into the prompt (run), comma-separated paths;
                            default AGENTS.md,CLAUDE.md,.github/copilot-instructions.md; "" reads none
  --run ID                  the run (resume, status, continue, fork); default: the latest resumable (resume) or latest (status)
  --step N                  fork: the step whose start the fork goes back to (its history is the run's before it)
  --files keep|restore      fork: leave the files as they are (default), or roll back the agent's later changes first
  --json                    status and fork as JSON; run, resume and continue: one JSON event per line (text, call, outcome...)
  --quiet                   run, resume and continue: print only the outcome (and warnings)
  --detach                  run: record the task and queue the run for a worker (PostgreSQL store); prints its id
  --concurrency N           worker: go on with up to N runs at once (default 1)
  --exit-when-idle          worker: stop once no queued or orphaned run of this workspace is left (a batch)
  --help, -h                this text`;

export const HELP = `${USAGE}\n${FLAG_HELP}`;

/** True when the arguments ask for the help text. */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h') || argv[0] === 'help';
}
