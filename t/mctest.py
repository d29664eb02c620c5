# SPDX-License-Identifier: BSD-3-Clause
"""t/mctest.py - shared helpers of the server's protocol tests.

Starts memcached/memcached on a free 127.0.0.1 port (retrying when another
process grabs the port first), talks to it over TCP, and keeps the tally
every non-Check test prints: "tally: N passed, M failed". Every server a
test starts is killed when the test ends, even on failure. Python 3
standard library only.

Across hosts (t/offload_hosts.sh): RDN_TEST_HOST is the server's address
as the test's clients reach it, RDN_TEST_SERVER_WRAP the command that runs
our server on the other host (e.g. "ip netns exec NS env VAR=..."); the
server then listens on every address (-l 0.0.0.0).
"""
import atexit
import os
import signal
import socket
import subprocess
import sys
import time

TOP_BUILDDIR = os.environ.get(
    "top_builddir",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SERVER = os.path.join(TOP_BUILDDIR, "memcached", "memcached")
IO_TIMEOUT = 10.0
HOST = os.environ.get("RDN_TEST_HOST", "127.0.0.1")
SERVER_WRAP = os.environ.get("RDN_TEST_SERVER_WRAP", "").split()

_servers = []


def free_port(kind=socket.SOCK_STREAM):
    """A port that was free a moment ago (bind port 0, close)."""
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def root_args():
    """memcached refuses to run as root without -u."""
    return ["-u", "root"] if os.geteuid() == 0 else []


def server_cmd(args, program=None):
    """The command line that starts our server (or program) with args, on
    the other host when the test runs across hosts."""
    if program:
        return [program] + root_args() + list(args)
    where = SERVER_WRAP + [SERVER] + root_args()
    return where + (["-l", "0.0.0.0"] if SERVER_WRAP else []) + list(args)


class Server:
    """One running server; stop() (or test exit) kills it. program: another
    memcached-compatible binary (a reference server) instead of ours."""

    def __init__(self, args=(), udp=False, unix=None, tries=5, program=None):
        self.proc = None
        for _ in range(tries):
            self.port = free_port()
            cmd = server_cmd(args, program)
            if unix:
                cmd += ["-s", unix]
            else:
                cmd += ["-p", str(self.port)]
            if udp:
                # The TCP port's number: UDP sockets with SO_REUSEADDR (ours
                # and memcached's) may share a port unnoticed, so two servers
                # of tests running side by side could take one another's
                # datagrams; a TCP listener's port is its own.
                self.udp_port = self.port
                cmd += ["-U", str(self.udp_port)]
            self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.PIPE)
            _servers.append(self)
            if self._wait_ready(unix):
                return
            self.stop()
        raise RuntimeError("server did not start: %s" % self.stderr())

    def _wait_ready(self, unix):
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                c = Client(self, unix=unix)
                c.close()
                return True
            except OSError:
                time.sleep(0.02)
        return False

    def stderr(self):
        if self.proc and self.proc.poll() is not None and self.proc.stderr:
            return self.proc.stderr.read().decode("latin1", "replace")
        return ""

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self in _servers:
            _servers.remove(self)


@atexit.register
def _kill_all():
    for s in list(_servers):
        s.stop()


class Client:
    """A TCP (or unix socket) connection with exact-read helpers."""

    def __init__(self, server, unix=None):
        if unix:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(IO_TIMEOUT)
            self.sock.connect(unix)
        else:
            self.sock = socket.create_connection((HOST, server.port),
                                                 timeout=IO_TIMEOUT)
        self.buf = b""

    def close(self):
        self.sock.close()

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        d = self.sock.recv(1 << 20)
        if not d:
            raise EOFError("connection closed")
        self.buf += d

    def read(self, n):
        while len(self.buf) < n:
            self._fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        i = self.buf.index(b"\r\n") + 2
        out, self.buf = self.buf[:i], self.buf[i:]
        return out

    def lines_until(self, last=b"END\r\n"):
        out = []
        while True:
            ln = self.line()
            out.append(ln)
            if ln == last or ln.startswith((b"ERROR", b"CLIENT_ERROR",
                                            b"SERVER_ERROR")):
                return out

    def before_mn(self, data):
        """Sends data, then "mn\r\n": the whole reply to data (noreply
        ones and multi-line ones included) is what comes before the MN."""
        self.send(data + b"mn\r\n")
        out = b""
        while not out.endswith(b"MN\r\n"):
            out += self.line()
        return out[:-4]

    def cmd(self, data, nbytes=None):
        """Sends data and returns exactly len(nbytes) bytes of reply."""
        self.send(data)
        return self.read(nbytes)

    def closed_by_server(self, wait=IO_TIMEOUT):
        """True if the server closed the connection (EOF within wait: it
        comes at once when it comes, a loaded machine may delay it)."""
        self.sock.settimeout(wait)
        try:
            while True:
                d = self.sock.recv(65536)
                if not d:
                    return True
                self.buf += d
        except socket.timeout:
            return False
        except OSError:
            return True
        finally:
            self.sock.settimeout(IO_TIMEOUT)

    def quiet(self, wait=0.2):
        """True if nothing (not even EOF) arrives within wait seconds."""
        if self.buf:
            return False
        self.sock.settimeout(wait)
        try:
            self.buf += self.sock.recv(65536)
            return False
        except socket.timeout:
            return True
        finally:
            self.sock.settimeout(IO_TIMEOUT)

    def _retrieve(self, cmd, key):
        """The VALUE line's words and the value of one key, or None."""
        self.send(cmd + b" " + key + b"\r\n")
        ln = self.line()
        if ln == b"END\r\n":
            return None
        parts = ln.split()
        val = self.read(int(parts[3]) + 2)[:-2]
        end = self.line()
        assert end == b"END\r\n", end
        return parts, val

    def get(self, key):
        """(flags, value) of key, or None."""
        r = self._retrieve(b"get", key)
        return r and (int(r[0][2]), r[1])

    def gets(self, key):
        """(flags, value, cas) of key, or None."""
        r = self._retrieve(b"gets", key)
        return r and (int(r[0][2]), r[1], int(r[0][4]))

    def set(self, key, val, flags=0, exptime=0):
        self.send(b"set %s %d %d %d\r\n%s\r\n" % (key, flags, exptime,
                                                  len(val), val))
        return self.line()

    def stats(self, sub=b""):
        self.send(b"stats" + (b" " + sub if sub else b"") + b"\r\n")
        out = {}
        for ln in self.lines_until():
            if ln.startswith(b"STAT "):
                name, _, value = ln[5:-2].partition(b" ")
                out[name.decode()] = value.decode()
        return out


def wait_for(fn, secs=10.0, step=0.05):
    """fn() until it is true, every step seconds for at most secs: its last
    value. For what the server does after it answered (a closed
    connection's end, a thread's sweep), which a loaded machine delays."""
    deadline = time.time() + secs
    while True:
        v = fn()
        if v or time.time() > deadline:
            return v
        time.sleep(step)


class Tally:
    """Counts checks; finish() prints the closing line and exits."""

    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0
        self.t0 = time.time()

    def check(self, what, cond, detail=""):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL: %s %s" % (what, detail))
        return cond

    def eq(self, what, got, want):
        return self.check(what, got == want,
                          "got %r want %r" % (got, want))

    def run(self, fn, *args):
        """Runs one test function; an exception counts as a failure."""
        try:
            fn(self, *args)
        except Exception as e:  # a crash of one test is one failure
            self.check("%s raised" % fn.__name__, False, repr(e))

    def finish(self):
        print("%s: %.1f s" % (self.name, time.time() - self.t0))
        print("tally: %d passed, %d failed" % (self.passed, self.failed))
        _kill_all()
        sys.exit(1 if self.failed else 0)
