# SPDX-License-Identifier: BSD-3-Clause
"""t/offload_env.py - shared helpers of the offloaded-GET end-to-end tests.

Starts a private rdn-nicd (its own socket in a temporary directory, killed
when the test ends), memcached with --rdn-port on that daemon (through
t/mctest.py, which kills it too), and t/offload_driver, the RDMA client
the tests drive over pipes. Python 3 standard library only.

Across hosts (t/offload_hosts.sh, with mctest's RDN_TEST_HOST and
RDN_TEST_SERVER_WRAP): the private rdn-nicd is the clients' host's NIC,
listening on RDN_TEST_NICD_LISTEN with the options RDN_TEST_NICD_ARGS.
"""
import atexit
import errno
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import mctest
import rdnwire

TOP = mctest.TOP_BUILDDIR
NICD = os.path.join(TOP, "rdn", "softnic", "rdn-nicd")
DRIVER = os.path.join(TOP, "t", "offload_driver")

_procs = []


def _stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@atexit.register
def _kill_all():
    for p in reversed(_procs):
        _stop(p)


class Nicd:
    """A private rdn-nicd; the environment points every NIC user at it."""

    def __init__(self, threads=2):
        self.dir = tempfile.mkdtemp(prefix="rdn-offload-")
        self.sock = os.path.join(self.dir, "nicd.sock")
        listen = os.environ.get("RDN_TEST_NICD_LISTEN")  # across hosts
        more = os.environ.get("RDN_TEST_NICD_ARGS", "").split()
        self.proc = subprocess.Popen(
            [NICD, "--socket", self.sock, "--threads", str(threads)] +
            (["--listen", listen] if listen else []) + more,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _procs.append(self.proc)
        atexit.register(shutil.rmtree, self.dir, True)
        deadline = time.time() + 10
        while not os.path.exists(self.sock):
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("rdn-nicd did not start")
            time.sleep(0.02)
        os.environ["RDN_NICD_SOCKET"] = self.sock
        os.environ["RDN_NICD_AUTOSTART"] = "0"
        os.environ["RDN_DEVICE"] = "softnic"


def start_server(args=(), tries=5):
    """memcached --rdn-port on the daemon: (server, rdn_port)."""
    last = None
    for _ in range(tries):
        rdn_port = mctest.free_port()
        try:
            srv = mctest.Server(list(args) + ["--rdn-port", str(rdn_port)],
                                tries=1)
        except RuntimeError as e:  # a port taken meanwhile: try others
            last = e
            continue
        # The TCP port may accept before the handshake port listens.
        if _wait_port(rdn_port, srv):
            return srv, rdn_port
        srv.stop()
        last = RuntimeError("handshake port %d never listened" % rdn_port)
    raise last


class RestartableServer:
    """memcached on fixed ports (so a restart finds its domain again),
    stderr kept in a file."""

    def __init__(self, args=()):
        self.port, self.rdn_port = mctest.free_port(), mctest.free_port()
        self.args = list(args)
        self.proc = None
        self.logf = tempfile.NamedTemporaryFile(prefix="mc-restart-",
                                                suffix=".log", delete=False)
        self.logf.close()

    def start(self, extra=()):
        """Starts it; True once both ports accept."""
        cmd = mctest.server_cmd(self.args + list(extra) + [
            "-p", str(self.port), "--rdn-port", str(self.rdn_port)])
        with open(self.logf.name, "w") as log:
            self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                         stderr=log)
        _procs.append(self.proc)
        end = time.time() + 15
        while time.time() < end and self.proc.poll() is None:
            if accepts(self.port) and accepts(self.rdn_port):
                return True
            time.sleep(0.05)
        return False

    def log(self):
        with open(self.logf.name, errors="replace") as f:
            return f.read()

    def end(self, sig):
        self.proc.send_signal(sig)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def client(self):
        return mctest.Client(self)

    def close(self):
        if self.proc and self.proc.poll() is None:
            self.end(signal.SIGKILL)
        os.unlink(self.logf.name)


def forged_resume(port, client_id, token):
    """Sends a RESUME (proto/rdn_wire.h) on a new handshake connection:
    the REJECT status it gets (a negative errno), 0 for another answer,
    None if the server just hangs up."""
    payload = rdnwire.LAYOUTS["rdn_resume"].pack(token=token,
                                                 client_id=client_id)
    s = socket.create_connection((mctest.HOST, port), timeout=5)
    try:
        s.sendall(rdnwire.msg(rdnwire.RDN_MSG_RESUME, payload))
        reply = rdnwire.read_msg(s)
        if reply is None:
            return None
        status = rdnwire.reject_status(reply)
        return 0 if status is None else status
    finally:
        s.close()


def accepts(port):
    """True if something accepts TCP connections on the server's port."""
    try:
        socket.create_connection((mctest.HOST, port), timeout=1).close()
        return True
    except OSError:
        return False


def _wait_port(port, srv, secs=10):
    deadline = time.time() + secs
    while time.time() < deadline and srv.alive():
        try:
            socket.create_connection((mctest.HOST, port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.02)
    return False


def driver_cmd(tcp_port, rdn_port):
    """offload_driver against the server on those ports."""
    return [DRIVER, "-s", mctest.HOST, "-p", str(rdn_port), "-t",
            str(tcp_port)]


RACE_FIELDS = ("gets", "nic", "tcp", "hits", "misses", "wrong", "torn")


def driver_counts(out):
    """offload_driver's closing "name value name value ..." as a dict."""
    w = out.decode().split()
    return {w[i]: int(w[i + 1]) for i in range(0, len(w) - 1, 2)}


def race_start(t, c, base, nkeys, secs, gets):
    """Starts offload_driver's writer SETting keys race-0..nkeys-1 for
    secs + 5 s, waits until client c sees every key (checked in t, 30 s at
    most: readers started earlier would miss), then two readers GETting
    them for secs or gets GETs in all. Returns (writer, readers); both are
    killed when the test ends."""
    writer = subprocess.Popen(base + ["write", str(nkeys), str(secs + 5)],
                              stdout=subprocess.PIPE)
    _procs.append(writer)
    deadline = time.time() + 30
    stored = False
    while not stored and time.time() < deadline:
        stored = all(c.get(b"race-%d" % i) for i in range(nkeys))
        time.sleep(0 if stored else 0.05)
    t.check("writer stored every key (within 30 s)", stored)
    readers = [subprocess.Popen(base + ["race", str(nkeys), str(secs),
                                        str(gets // 2)],
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
               for _ in range(2)]
    _procs.extend(readers)
    return writer, readers


def race_collect(t, readers, timeout):
    """Waits for race_start()'s readers (exit status checked in t); their
    counts summed over RACE_FIELDS."""
    res = []
    for r in readers:
        out, err = r.communicate(timeout=timeout)
        if err:
            print(err.decode("latin1", "replace")[:2000])
        t.eq("reader exit status", r.returncode, 0)
        res.append(driver_counts(out))
    return {k: sum(r.get(k, 0) for r in res) for k in RACE_FIELDS}


class Driver:
    """One RDMA client (offload_driver serve) on pipes."""

    def __init__(self, srv, rdn_port, no_fallback=False, login=None):
        cmd = driver_cmd(srv.port, rdn_port)
        if no_fallback:
            cmd.append("-n")
        if login:
            cmd += ["-u", login[0], "-w", login[1]]
        self.proc = subprocess.Popen(cmd + ["serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        _procs.append(self.proc)
        ready = self.proc.stdout.readline()
        if ready != b"READY\n":
            err = self.proc.stderr.read().decode("latin1", "replace")
            raise RuntimeError("driver did not start: %r %s" % (ready, err))

    def _ask(self, line):
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()
        out = self.proc.stdout.readline()
        if not out:
            raise EOFError("driver died")
        return out

    def get(self, *keys, cmd=b"get"):
        """[(status, src, flags, cas, value or None)] for keys (bytes);
        cmd b"vget": one rdn_get_value() per key into a reused buffer."""
        words = self._ask(cmd + b" " + b" ".join(k.hex().encode()
                                                for k in keys)).split()
        out = []
        for i in range(0, len(words), 5):
            st, src, flags, cas, val = words[i:i + 5]
            out.append((int(st), src.decode(), int(flags), int(cas),
                        None if val == b"-" else bytes.fromhex(val[1:].decode())))
        return out

    def get1(self, key):
        return self.get(key)[0]

    def vget1(self, key):
        return self.get(key, cmd=b"vget")[0]

    def vstats(self):
        """(capacity, moves) of the session's reused value buffer."""
        w = self._ask(b"vstats").split()
        return int(w[1]), int(w[3])

    def stats(self):
        w = self._ask(b"stats").split()
        return {w[i].decode(): int(w[i + 1]) for i in range(0, len(w), 2)}

    def close(self):
        try:
            self.proc.stdin.write(b"quit\n")
            self.proc.stdin.flush()
            self.proc.wait(10)
        except (OSError, subprocess.TimeoutExpired):
            pass
        _stop(self.proc)


def run_driver(srv, rdn_port, *args, timeout=120):
    """Runs offload_driver once: (exit status, stdout text)."""
    p = subprocess.Popen(driver_cmd(srv.port, rdn_port)
                         + [str(a) for a in args], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _procs.append(p)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    if err:
        print(err.decode("latin1", "replace").strip())
    return p.returncode, out.decode()


ENOENT = -errno.ENOENT
EAGAIN = -errno.EAGAIN
