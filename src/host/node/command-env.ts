// The environment of a process the agent starts (a command, a stdio MCP server) is built, not
// inherited: the variables a shell, a compiler or a package manager needs, plus what the person
// allowed by name or pattern (`agentCheckpoints.commandEnvironment`, `--pass-env`). A variable
// whose name or value looks like a credential passes only when named exactly; the agent's own key
// never passes.

/** Variables that hold the agent's own credentials: no process the agent starts sees them, even when named. */
export const WITHHELD_ENV = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'];

/**
 * What every command gets when the host has it. Left out on purpose: XDG_RUNTIME_DIR and
 * DBUS_SESSION_BUS_ADDRESS, DISPLAY, WAYLAND_DISPLAY (sockets of the desktop session), the agent
 * sockets (SSH_AUTH_SOCK, GPG_AGENT_INFO), GIT_* and VSCODE_* (the editor's git credential helper
 * answers over an IPC socket they name), NODE_OPTIONS (an editor's debug terminal puts its
 * bootloader there), LD_PRELOAD, JAVA_TOOL_OPTIONS/MAVEN_OPTS (may carry -D passwords), npm_config_*.
 */
const BASE_ENV = [
  // The shell, the user, the locale, time and temporary files.
  ...['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'TERM', 'LANG', 'LANGUAGE', 'LC_*', 'TZ', 'TMPDIR'],
  ...['XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME'],
  // Certificates and the network's proxies (a proxy address holding a password is withheld by its value).
  ...['SSL_CERT_FILE', 'SSL_CERT_DIR', 'NODE_EXTRA_CA_CERTS', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE'],
  ...['http_proxy', 'https_proxy', 'no_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY'],
  // C and C++ builds.
  ...['CC', 'CXX', 'CFLAGS', 'CXXFLAGS', 'CPPFLAGS', 'LDFLAGS', 'PKG_CONFIG_PATH', 'LD_LIBRARY_PATH'],
  // Java, Android, Go, Rust.
  ...['JAVA_HOME', 'MAVEN_HOME', 'M2_HOME', 'GRADLE_HOME', 'GRADLE_USER_HOME', 'ANDROID_HOME', 'ANDROID_SDK_ROOT'],
  ...[
    'GOPATH',
    'GOROOT',
    'GOBIN',
    'GOCACHE',
    'GOMODCACHE',
    'GOFLAGS',
    'GOPROXY',
    'GOPRIVATE',
    'CARGO_HOME',
    'RUSTUP_HOME',
    'RUSTUP_TOOLCHAIN',
  ],
  // Node, Python, Ruby, .NET.
  ...['NVM_DIR', 'NVM_BIN', 'NVM_INC', 'NODE_PATH', 'PYENV_ROOT', 'PYENV_VERSION', 'VIRTUAL_ENV', 'PYTHONPATH'],
  ...[
    'CONDA_PREFIX',
    'CONDA_DEFAULT_ENV',
    'CONDA_EXE',
    'PIP_INDEX_URL',
    'PIP_EXTRA_INDEX_URL',
    'GEM_HOME',
    'GEM_PATH',
    'RBENV_ROOT',
    'DOTNET_ROOT',
  ],
  // Windows (names compared case-insensitively there); PSMODULEPATH for PowerShell, the processor's for node-gyp and MSBuild.
  ...['SYSTEMROOT', 'SYSTEMDRIVE', 'WINDIR', 'COMSPEC', 'PATHEXT', 'USERPROFILE', 'HOMEDRIVE', 'HOMEPATH', 'APPDATA', 'LOCALAPPDATA'],
  ...['TEMP', 'TMP', 'PROGRAMFILES', 'PROGRAMFILES(X86)', 'PROGRAMDATA', 'COMMONPROGRAMFILES', 'PSMODULEPATH'],
  ...['OS', 'PROCESSOR_ARCHITECTURE', 'NUMBER_OF_PROCESSORS'],
];

/** The shell's own bookkeeping: it sets these itself; neither passed nor named as withheld. */
const SHELL_OWN = new Set(['PWD', 'OLDPWD', 'SHLVL', '_']);

/** Words of a credential's name (case ignored): PASS covers PASSWORD, PASSWD and DB_PASS. */
const CREDENTIAL_WORD = /KEY|SECRET|TOKEN|PASS|CREDENTIAL|AUTH|COOKIE/i;
/** Cloud providers' variables, and the sockets of agents that sign or log in for the user. */
const CREDENTIAL_NAME = /^(AWS_|AZURE_|GCP_|GOOGLE_APPLICATION_CREDENTIALS$|SSH_AUTH_SOCK$|GPG_AGENT_INFO$|KRB5CCNAME$)/i;
/** An address with a password in it (`scheme://user:password@`, the user may be empty). */
const PASSWORD_IN_ADDRESS = /[a-z][a-z0-9+.-]*:\/\/[^\s/@:]*:[^\s/@]+@/i;

/** True for a variable that looks like a credential: by its name, or by an address with a password as its value. */
export function looksLikeCredential(name: string, value: string): boolean {
  return CREDENTIAL_WORD.test(name) || CREDENTIAL_NAME.test(name) || PASSWORD_IN_ADDRESS.test(value);
}

/** A name or a pattern of names (`*` any run of characters, `?` one) the person may allow. */
export const ENV_PATTERN = /^[A-Za-z_*?][A-Za-z0-9_*?]*$/;

function isPattern(entry: string): boolean {
  return /[*?]/.test(entry);
}

function patternRegex(pattern: string, caseless: boolean): RegExp {
  const body = pattern.replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`, caseless ? 'i' : '');
}

/** What a process is given, and the names of what it is not (split: those that look like credentials, the others). */
export interface BuiltEnvironment {
  readonly env: Record<string, string>;
  readonly withheldCredentials: readonly string[];
  readonly withheldOthers: readonly string[];
}

export interface EnvironmentRules {
  /** Names and patterns the person allowed (`agentCheckpoints.commandEnvironment`, `--pass-env`). */
  readonly allowed?: readonly string[];
  /** Values that are the agent's key wherever they are held: a variable with one of them never passes. */
  readonly secrets?: readonly string[];
  readonly platform?: NodeJS.Platform;
}

/** The environment of a process the agent starts, built from the host's `env` by the rules above. */
export function buildEnvironment(env: NodeJS.ProcessEnv, rules: EnvironmentRules = {}): BuiltEnvironment {
  const caseless = (rules.platform ?? process.platform) === 'win32';
  const norm = (name: string): string => (caseless ? name.toUpperCase() : name);
  const allowed = rules.allowed ?? [];
  const exact = new Set(allowed.filter((entry) => !isPattern(entry)).map(norm));
  const patterns = [...allowed.filter(isPattern), ...BASE_ENV.filter(isPattern)].map((p) => patternRegex(p, caseless));
  const base = new Set(BASE_ENV.filter((entry) => !isPattern(entry)).map(norm));
  const keyNames = new Set(WITHHELD_ENV.map(norm));
  const keys = new Set(
    [...(rules.secrets ?? []), ...WITHHELD_ENV.map((name) => env[name])].filter((v): v is string => v !== undefined && v !== ''),
  );
  const built: Record<string, string> = {};
  const credentials: string[] = [];
  const others: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || SHELL_OWN.has(name)) continue;
    const key = norm(name);
    if (keyNames.has(key) || keys.has(value)) credentials.push(name);
    else if (exact.has(key)) built[name] = value;
    else if (looksLikeCredential(name, value)) credentials.push(name);
    else if (base.has(key) || patterns.some((p) => p.test(name))) built[name] = value;
    else others.push(name);
  }
  return { env: built, withheldCredentials: credentials.sort(), withheldOthers: others.sort() };
}

/** At most this many names are listed; the rest are counted. */
const LISTED_NAMES = 60;

function listed(names: readonly string[]): string {
  const shown = names.slice(0, LISTED_NAMES).join(', ');
  return names.length > LISTED_NAMES ? `${shown} and ${names.length - LISTED_NAMES} more` : shown;
}

/**
 * Tells the names withheld from commands once: the first result that withholds a name it has
 * not told yet lists those names (never values); later results say nothing more.
 */
export class WithheldNames {
  private readonly told = new Set<string>();

  /** The note for a command's result, or undefined when every withheld name was told before. */
  note(built: BuiltEnvironment): string | undefined {
    const fresh = (names: readonly string[]): string[] => names.filter((name) => !this.told.has(name));
    const credentials = fresh(built.withheldCredentials);
    const others = fresh(built.withheldOthers);
    if (credentials.length + others.length === 0) return undefined;
    for (const name of [...credentials, ...others]) this.told.add(name);
    const lines = ['Variables of the host environment withheld from commands (names only; told once):'];
    if (credentials.length > 0) lines.push(`- look like credentials: ${listed(credentials)}`);
    if (others.length > 0) lines.push(`- not in the base set: ${listed(others)}`);
    lines.push(
      'The person can pass one by name with agentCheckpoints.commandEnvironment (user settings) or --pass-env NAME; a credential passes only when named exactly.',
    );
    return lines.join('\n');
  }
}
