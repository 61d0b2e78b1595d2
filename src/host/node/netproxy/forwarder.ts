import { existsSync } from 'node:fs';

// The forwarder inside a sandbox whose network namespace holds only its own loopback: it listens
// on the sandbox's 127.0.0.1:FORWARDER_PORT and relays each connection to the host's proxy, whose
// Unix socket is bound into the sandbox at PROXY_SOCKET_IN_SANDBOX. The sandbox's shell starts it
// before the command and waits until it listens (a line on a pipe), so the command never races it.
// Perl starts in a few milliseconds where it is installed (Debian and Ubuntu ship it in every
// system); otherwise the host's Node runs the same relay.

/** The port the forwarder listens on inside the sandbox (the namespace is the command's own: no clash with the host). */
export const FORWARDER_PORT = 47611;
/** Where the host proxy's socket appears inside the sandbox (on the /run tmpfs, read-only). */
export const PROXY_SOCKET_IN_SANDBOX = '/run/agent-checkpoints/proxy.sock';

const PERL_RELAY = `use strict; use IO::Socket::INET; use IO::Socket::UNIX; use IO::Select; use Socket;
my ($port, $path) = @ARGV;
my $l = IO::Socket::INET->new(Listen => 128, LocalAddr => '127.0.0.1', LocalPort => $port, ReuseAddr => 1, Proto => 'tcp') or die "listen: $!";
$SIG{CHLD} = 'IGNORE'; $| = 1; print "ready\\n"; close STDOUT;
while (1) { my $c = $l->accept or next; my $pid = fork; if (defined $pid && $pid == 0) { close $l; relay($c); exit 0 } close $c }
sub relay { my ($c) = @_; my $u = IO::Socket::UNIX->new(Type => SOCK_STREAM, Peer => $path) or return;
  my %to = (fileno($c) => $u, fileno($u) => $c); my $s = IO::Select->new($c, $u);
  while ($s->count) { for my $h ($s->can_read) { my $n = sysread($h, my $buf, 65536); my $o = $to{fileno $h};
    if (!$n) { shutdown($o, 1); $s->remove($h); next }
    for (my $off = 0; $off < $n;) { my $w = syswrite($o, $buf, $n - $off, $off); return unless defined $w; $off += $w } } } }`;

const NODE_RELAY = `const net=require('net');const [port,path]=process.argv.slice(1);
net.createServer((c)=>{const u=net.connect(path);c.pipe(u);u.pipe(c);c.on('error',()=>u.destroy());u.on('error',()=>c.destroy())})
.listen(Number(port),'127.0.0.1',()=>process.stdout.write('ready\\n'));`;

/** The relay program and its code: Perl where /usr/bin/perl is, else the host's own Node (visible read-only in the sandbox). */
export function forwarderProgram(perl = '/usr/bin/perl', node = process.execPath): { program: string; code: string } {
  return existsSync(perl) ? { program: perl, code: PERL_RELAY } : { program: node, code: NODE_RELAY };
}

/**
 * Shell text run before the command (positional parameters: $2 the socket, $3 the port, $4 the
 * program, $5 its code): starts the relay in the background and waits for its "ready" on a FIFO in
 * the sandbox's private /tmp; the command does not run when it does not come.
 */
export const START_FORWARDER =
  'f=/tmp/.agent-checkpoints-forwarder; rm -f "$f"; mkfifo "$f" && { "$4" -e "$5" "$3" "$2" </dev/null >"$f" 2>/dev/null & read -r r <"$f"; rm -f "$f"; [ "$r" = ready ]; } || { echo "agent-checkpoints: the network forwarder did not start, so the command did not run" >&2; exit 126; }; ';

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
