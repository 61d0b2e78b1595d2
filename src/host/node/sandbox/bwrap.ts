import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, realpathSync } from 'node:fs';
import * as nodePath from 'node:path';
import { forwarderProgram, FORWARDER_PORT, PROXY_SOCKET_IN_SANDBOX } from '../netproxy/forwarder';
import { PRIVATE_DIRS, type SandboxPlan } from './plan';

// bubblewrap (Linux): the arguments for one command, from its plan. Order matters: a later mount
// covers an earlier one, so the system goes first, then the hidden areas, then the workspace, then
// what is read-only or hidden inside it.

/**
 * Where the host keeps its Unix sockets (PostgreSQL's /run/postgresql, the system D-Bus, container
 * engines, nscd...): an empty tmpfs in the sandbox, since connecting to a socket is no write and
 * --unshare-net does not cover socket files. /var/run too where it is a folder, not a link to /run.
 */
function socketDirs(): string[] {
  return ['/run', '/var/run'].filter(isRealDir);
}

function isRealDir(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

const underRun = (path: string): boolean => path.startsWith('/run/') || path.startsWith('/var/run/');

/**
 * What a command needs back from /run, read-only: the file /etc/resolv.conf links to when it lies
 * there (systemd-resolved's stub-resolv.conf, resolvconf, NetworkManager), so names still resolve,
 * and the program folders of PATH there (NixOS: /run/current-system/sw/bin, /run/wrappers/bin).
 */
export function runKeeps(resolvConf = '/etc/resolv.conf', path = process.env['PATH'] ?? ''): string[] {
  const keeps = path.split(':').filter((dir) => nodePath.isAbsolute(dir) && underRun(nodePath.normalize(dir)));
  try {
    const target = realpathSync(resolvConf);
    if (underRun(target)) keeps.push(target);
  } catch {
    // No resolv.conf, or a dangling link: nothing to keep.
  }
  return keeps;
}

export function bwrapArgs(plan: SandboxPlan, cwd: string, command: string): string[] {
  const args = [
    '--die-with-parent',
    '--new-session',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    // Without this, bwrap started by root keeps every capability: the command could remount / read-write.
    '--cap-drop',
    'ALL',
    ...(plan.network ? [] : ['--unshare-net']),
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
  ];
  for (const dir of socketDirs()) args.push('--tmpfs', dir);
  for (const path of runKeeps()) args.push('--ro-bind-try', path, path);
  // /run/user lies in the tmpfs of /run already.
  for (const dir of PRIVATE_DIRS) if (existsSync(dir) && !dir.startsWith('/run/')) args.push('--tmpfs', dir);
  if (plan.home !== undefined) args.push('--tmpfs', plan.home);
  for (const path of plan.homePrograms) args.push('--ro-bind', path, path);
  for (const path of plan.homePaths) args.push('--bind', path, path);
  for (const root of plan.roots) args.push(plan.readOnlyRoots === true ? '--ro-bind' : '--bind', root, root);
  // Not -try: a protected path gone since the plan fails the start rather than leave the path unguarded.
  for (const { path } of plan.readOnly) args.push('--ro-bind', path, path);
  for (const { path, dir } of plan.hidden) args.push(...(dir ? ['--tmpfs', path] : ['--ro-bind', '/dev/null', path]));
  // The host proxy's socket, for the forwarder the shell starts before the command (netproxy/).
  if (plan.proxySocket !== undefined) args.push('--ro-bind', plan.proxySocket, PROXY_SOCKET_IN_SANDBOX);
  args.push('--chdir', cwd, '--', ...shellOf(command, plan.proxySocket !== undefined));
  return args;
}

/**
 * Closes every descriptor past stderr, then runs the command: bwrap passes on whatever its parent
 * inherited without close-on-exec (the CLI's key pipe, an editor's IPC channel). dash cannot close a
 * descriptor above 9, so bash does it when there is one.
 */
const CLOSE_INHERITED = 'for f in /proc/$$/fd/*; do n=${f##*/}; if [ "$n" -gt 2 ]; then exec {n}>&-; fi; done; ';
const RUN = 'exec /bin/sh -c "$1"';

function shellOf(command: string, forward: boolean): string[] {
  const bash = existsSync('/bin/bash');
  if (!forward) return bash ? ['/bin/bash', '-c', CLOSE_INHERITED + RUN, 'sh', command] : ['/bin/sh', '-c', command];
  const { program, code, start } = forwarderProgram();
  const script = (bash ? CLOSE_INHERITED : '') + start + RUN;
  return [bash ? '/bin/bash' : '/bin/sh', '-c', script, 'sh', command, PROXY_SOCKET_IN_SANDBOX, String(FORWARDER_PORT), program, code];
}

export type SandboxKind = { kind: 'bwrap'; path: string } | { kind: 'sandbox-exec'; path: string } | { kind: 'none'; reason: string };

let detected: SandboxKind | undefined;

function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env['PATH'] ?? '').split(nodePath.delimiter)) {
    if (dir !== '' && existsSync(nodePath.join(dir, name))) return nodePath.join(dir, name);
  }
  return existsSync(`/usr/bin/${name}`) ? `/usr/bin/${name}` : undefined;
}

/** The platform's sandbox, found once per process (a trial run proves bwrap can make its namespaces here). */
export function detectSandbox(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): SandboxKind {
  if (detected !== undefined) return detected;
  if (platform === 'darwin') {
    detected = existsSync('/usr/bin/sandbox-exec')
      ? { kind: 'sandbox-exec', path: '/usr/bin/sandbox-exec' }
      : { kind: 'none', reason: 'sandbox-exec was not found' };
    return detected;
  }
  if (platform !== 'linux') return (detected = { kind: 'none', reason: `no sandbox is supported on ${platform}` });
  const path = onPath('bwrap', env);
  if (path === undefined)
    return (detected = { kind: 'none', reason: 'bubblewrap (bwrap) is not installed; install it with: sudo apt-get install bubblewrap' });
  const trial = spawnSync(
    path,
    ['--ro-bind', '/', '/', '--unshare-pid', '--proc', '/proc', '--dev', '/dev', '--cap-drop', 'ALL', '/bin/true'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 5000,
    },
  );
  detected =
    trial.status === 0
      ? { kind: 'bwrap', path }
      : { kind: 'none', reason: `bubblewrap cannot make a sandbox here (${trial.stderr?.toString().trim() || `exit ${trial.status}`})` };
  return detected;
}
