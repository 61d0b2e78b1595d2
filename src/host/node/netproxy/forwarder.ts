import { existsSync } from 'node:fs';

// The forwarder inside a sandbox whose network namespace holds only its own loopback: it listens
// on the sandbox's 127.0.0.1:FORWARDER_PORT and relays each connection to the host's proxy, whose
// Unix socket is bound into the sandbox at PROXY_SOCKET_IN_SANDBOX. The sandbox's shell starts it
// before the command and waits until it listens, so the command never races it. Perl starts in a
// few milliseconds where it is installed (Debian and Ubuntu ship it in every system); otherwise the
// host's Node runs the same relay.

/** The port the forwarder listens on inside the sandbox (the namespace is the command's own: no clash with the host). */
export const FORWARDER_PORT = 47611;
/** Where the host proxy's socket appears inside the sandbox (on the /run tmpfs, read-only). */
export const PROXY_SOCKET_IN_SANDBOX = '/run/agent-checkpoints/proxy.sock';

/**
 * Perl with no module at all (loading Socket.pm alone costs ~10 ms, four times the interpreter's
 * start): the socket calls are built-ins, and the constants and address layouts are Linux's
 * (bubblewrap runs on Linux only; AF_INET 2, AF_UNIX 1, SOCK_STREAM 1, SOL_SOCKET 1, SO_REUSEADDR 2,
 * IPPROTO_TCP 6, TCP_NODELAY 1). It listens, then forks and the parent exits, so the shell goes on
 * once the port listens; one child per connection relays both ways (TCP_NODELAY, or the last
 * segment of a response waits for a delayed ACK).
 */
const PERL_RELAY = `my ($port, $path) = @ARGV;
socket(my $l, 2, 1, 0) or die; setsockopt($l, 1, 2, 1);
bind($l, pack('S n C4 x8', 2, $port, 127, 0, 0, 1)) or die "bind: $!"; listen($l, 128) or die;
$SIG{CHLD} = 'IGNORE'; defined(my $pid = fork) or die; exit 0 if $pid;
while (1) { accept(my $c, $l) or next; if (!fork) { close $l; relay($c); exit 0 } close $c }
sub relay { my ($c) = @_; socket(my $u, 1, 1, 0) or return; connect($u, pack('S Z108', 1, $path)) or return;
  setsockopt($c, 6, 1, 1); my %open = (fileno($c) => $c, fileno($u) => $u); my %peer = (fileno($c) => $u, fileno($u) => $c);
  while (%open) { my $rin = ''; vec($rin, $_, 1) = 1 for keys %open; my $n = select(my $rout = $rin, undef, undef, undef);
    return if $n < 0; for my $fd (keys %open) { next unless vec($rout, $fd, 1); my $o = $peer{$fd};
      my $got = sysread($open{$fd}, my $buf, 65536); if (!$got) { shutdown($o, 1); delete $open{$fd}; next }
      for (my $off = 0; $off < $got;) { my $w = syswrite($o, $buf, $got - $off, $off); return unless defined $w; $off += $w } } } }`;

/** Node, where there is no Perl: says "ready" once it listens (the shell waits for the line on a FIFO). */
const NODE_RELAY = `const net=require('net');const [port,path]=process.argv.slice(1);
net.createServer({noDelay:true},(c)=>{const u=net.connect(path);c.pipe(u);u.pipe(c);c.on('error',()=>u.destroy());u.on('error',()=>c.destroy())})
.listen(Number(port),'127.0.0.1',()=>process.stdout.write('ready\\n'));`;

const FAILED = '{ echo "agent-checkpoints: the network forwarder did not start, so the command did not run" >&2; exit 126; }; ';

/**
 * The relay, and the shell text that starts it before the command (positional parameters: $2 the
 * socket, $3 the port, $4 the program, $5 its code): Perl where /usr/bin/perl is (it returns once it
 * listens), else the host's own Node (visible read-only in the sandbox), waited for on a FIFO in the
 * sandbox's private /tmp. The command does not run when the forwarder does not start.
 */
export function forwarderProgram(perl = '/usr/bin/perl', node = process.execPath): { program: string; code: string; start: string } {
  if (existsSync(perl)) return { program: perl, code: PERL_RELAY, start: `"$4" -e "$5" "$3" "$2" </dev/null >/dev/null 2>&1 || ${FAILED}` };
  return {
    program: node,
    code: NODE_RELAY,
    start: `f=/tmp/.agent-checkpoints-forwarder; rm -f "$f"; mkfifo "$f" && { "$4" -e "$5" "$3" "$2" </dev/null >"$f" 2>/dev/null & read -r r <"$f"; rm -f "$f"; [ "$r" = ready ]; } || ${FAILED}`,
  };
}

/** The variables that send a command's HTTP(S) traffic to the forwarder (its own loopback goes direct: it cannot leave the sandbox). */
export function proxyEnvironment(): Record<string, string> {
  const url = `http://127.0.0.1:${FORWARDER_PORT}`;
  const direct = 'localhost,127.0.0.1,::1';
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    NO_PROXY: direct,
    no_proxy: direct,
    NODE_USE_ENV_PROXY: '1',
  };
}
