#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/proto_auth.py - -Y and -S, exact bytes, side by side.

-Y FILE (ASCII authentication): scripted sessions (every command refused
before the login, malformed logins, a wrong and a good one, noreply, a
login split over two reads, passwords with ':' and extra tokens, binary
bytes and a 2 KB line without newline) must give exactly the bytes written
here, and the same sessions against Debian's memcached 1.6.18
(/usr/bin/memcached) the same bytes; the auth counters and settings in
stats, SIGHUP reloading the file, and the start-up refusals (-B binary or
auto, UDP, a missing or malformed file) too.

-S (SASL over the binary protocol, from a sasldb that saslpasswd2 makes,
configured through SASL_CONF_PATH as memcached's tests do): the same for
LIST_MECHS, AUTH, STEP, the "Auth failure." answers and closes of
commands sent before the login, a LIST_MECHS that logs out, ASCII
refused; a CRAM-MD5 login (a challenge, then SASL_STEP) on both servers;
then a SASL PLAIN login through libmemcached
(memcached_set_sasl_auth_data(), t/sasl_login) against both servers. A
build without libsasl2 must refuse -S with memcached's message instead.

Pipelined commands of a connection that has not logged in are answered
one by one here; memcached 1.6.18 answers only the last of the commands
it reads at once (its ASCII auth reuses one reply object), so every
session step here waits for its reply.
"""
import hmac
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mctest  # noqa: E402
from mctest import Server, Tally  # noqa: E402
from proto_bin import (  # noqa: E402
    GET, NOOP, SET, STAT, VERSION, SASL_AUTH, SASL_LIST, SASL_STEP, EINVAL,
    OK, err, req, res, sx, fl)

REFERENCE = "/usr/bin/memcached"
SASL_LOGIN = os.path.join(mctest.TOP_BUILDDIR, "t", "sasl_login")
AUTH_ERROR = 0x20
AUTH_CONTINUE = 0x21
MECHS = b"PLAIN CRAM-MD5"  # the SASL library's order
EOF = b"<EOF>"
QUIET = 0.05  # for replies beyond those expected
USERS = b"alice:secret\nbob:pa:ss\ncarol:\n"


def auth_fail(op):
    return res(op, AUTH_ERROR, value=b"Auth failure.")


def login(user, password, key=b"a", extra=b""):
    data = user + b" " + password
    return b"set %s 0 0 %d%s\r\n%s\r\n" % (key, len(data), extra, data)


class Conn(mctest.Client):
    def exchange(self, send, n, closes=False):
        """Sends send; the first n bytes of reply (fewer if the server
        closes or waits), then whatever else comes at once, and EOF if the
        server closed (waited for up to 5 s when it should: closes)."""
        if send:
            self.send(send)
        out = b""
        deadline = time.time() + mctest.IO_TIMEOUT
        self.sock.settimeout(0.5)
        try:
            while len(self.buf) < n and time.time() < deadline:
                try:
                    d = self.sock.recv(65536)
                except socket.timeout:
                    continue
                if not d:
                    return self._take() + EOF
                self.buf += d
            closed = self.closed_by_server(5.0 if closes else QUIET)
        except OSError:
            closed = True
        out = self._take()
        return out + (EOF if closed else b"")

    def _take(self):
        out, self.buf = self.buf, b""
        return out


def run_session(port, steps, unix=None):
    """The replies to a list of connections (to port, or to the unix
    socket unix), each a list of (send, want) steps; a step whose want ends
    in EOF ends its connection."""
    out = []
    for conn in steps:
        c = Conn(type("S", (), {"port": port}), unix=unix)
        got = []
        for send, want in conn:
            closes = want.endswith(EOF)
            got.append(c.exchange(send, len(want) - closes * len(EOF),
                                  closes))
            if want.endswith(EOF):
                break
        c.close()
        out.append(got)
    return out


def compare(t, name, steps, got, want_ref):
    for i, (conn, g) in enumerate(zip(steps, got)):
        for j, ((send, want), r) in enumerate(zip(conn, g)):
            t.eq("%s: connection %d step %d (%r)" % (name, i, j, send[:40]),
                 r, want)
    if want_ref is not None:
        t.eq("%s: every reply as memcached 1.6.18's" % name, got, want_ref)


def side_by_side(t, name, args, steps, ref_ok, env=None):
    """Runs steps on our server and on memcached with args; returns our
    server (still running) and the reference (or None)."""
    srv = Server(args)
    got = run_session(srv.port, steps)
    ref = want = None
    if ref_ok:
        ref = Server(["-l", "127.0.0.1"] + args, program=REFERENCE)
        want = run_session(ref.port, steps)
    compare(t, name, steps, got, want)
    return srv, ref


# ---- -Y ----

def ascii_steps():
    unauth = b"CLIENT_ERROR unauthenticated\r\n"
    failure = b"CLIENT_ERROR authentication failure\r\n"
    return [
        [(b"get foo\r\n", unauth),
         (b"version\r\n", unauth),
         (b"set a 0 0 x\r\n", unauth),
         (b"set a 0 0\r\n", unauth),
         (b"set a 0 0 -1\r\n", unauth),
         (b"ms a 2\r\n", unauth),
         (b"xx\r\n", unauth),
         (b"quit\r\n", unauth),
         (b"set a 0 0 5\r\nalice\r\n",
          b"CLIENT_ERROR bad authentication token format\r\n"),
         (b"set a 0 0 3\r\nabcXY",
          b"CLIENT_ERROR bad command line termination\r\n"),
         # memcached keeps the low 32 bits of the size: 2^32 + 3 is 3
         (b"set a 0 0 4294967299\r\nabcXY",
          b"CLIENT_ERROR bad command line termination\r\n"),
         (login(b"alice", b"wrong"), failure),
         (login(b"alice", b"secre"), failure),
         (login(b"alice", b"secrets"), failure),
         (login(b"nobody", b"secret"), failure),
         (login(b"alice", b"wrong", extra=b" noreply"), failure),
         (login(b"carol", b""), b"CLIENT_ERROR bad authentication token "
          b"format\r\n"),
         (b"set x 1 2 12\r\n", b""),
         (b"alice secret\r\n", b"STORED\r\n"),
         (b"get a\r\nget x\r\n", b"END\r\nEND\r\n"),
         (b"set k 5 0 1\r\nv\r\n", b"STORED\r\n"),
         (b"get k\r\n", b"VALUE k 5 1\r\nv\r\nEND\r\n")],
        [(login(b"bob", b"pa:ss"), b"STORED\r\n"),
         (b"get k\r\n", b"VALUE k 5 1\r\nv\r\nEND\r\n")],
        [(login(b"alice", b"secret extra"), b"STORED\r\n")],
        [(b"set a 0 0 15\r\n  alice  secret\r\n", b"STORED\r\n")],
        [(req(GET, b"k"), b""),
         (b"x" * 3000, EOF)],
        [(b"y" * 2000, b""),
         (b"\r\n", b"CLIENT_ERROR unauthenticated\r\n")],
    ]


def stat_values(port, names, login_cmd=None):
    c = Conn(type("S", (), {"port": port}))
    if login_cmd:
        c.send(login_cmd)
        c.line()
    st = c.stats()
    sets = c.stats(b"settings")
    c.close()
    return [st.get(n, sets.get(n)) for n in names]


def test_ascii(t, d, ref_ok):
    path = os.path.join(d, "users")
    with open(path, "wb") as f:
        f.write(USERS)
    args = ["-Y", path, "-t", "2"]
    srv, ref = side_by_side(t, "-Y", args, ascii_steps(), ref_ok)
    names = ["auth_cmds", "auth_errors", "auth_enabled_ascii",
             "auth_enabled_sasl", "binding_protocol"]
    ours = stat_values(srv.port, names, login(b"alice", b"secret"))
    t.eq("-Y: stats", ours, ["10", "5", path, "no", "ascii"])
    if ref:
        t.eq("-Y: stats as memcached's",
             ours, stat_values(ref.port, names, login(b"alice", b"secret")))

    # SIGHUP reloads the file: the new password works, the old no more.
    with open(path, "wb") as f:
        f.write(b"alice:newpass\n")
    for s in [srv] + ([ref] if ref else []):
        s.proc.send_signal(signal.SIGHUP)
    # memcached reloads in its once-a-second clock event, which a loaded
    # machine delays: wait (bounded) until each server took the new file.
    for s in [srv] + ([ref] if ref else []):
        mctest.wait_for(lambda: run_session(s.port, [[(
            login(b"alice", b"newpass"), b"STORED\r\n")]]) ==
            [[b"STORED\r\n"]], 10, 0.1)
    steps = [[(login(b"alice", b"secret"),
               b"CLIENT_ERROR authentication failure\r\n")],
             [(login(b"alice", b"newpass"), b"STORED\r\n")]]
    got = run_session(srv.port, steps)
    compare(t, "-Y after SIGHUP", steps, got,
            run_session(ref.port, steps) if ref else None)
    t.check("-Y: alive after SIGHUP", srv.alive())
    with open(path, "wb") as f:
        f.write(b"no colon here\n")
    srv.proc.send_signal(signal.SIGHUP)
    time.sleep(0.5)
    got = run_session(srv.port, [[(login(b"alice", b"newpass"),
                                   b"STORED\r\n")]])
    t.eq("-Y: a malformed file on SIGHUP keeps the old logins", got,
         [[b"STORED\r\n"]])
    srv.stop()
    if ref:
        ref.stop()

    # The same login over a unix socket.
    with open(path, "wb") as f:
        f.write(b"alice:newpass\n")
    steps = [[(b"get k\r\n", b"CLIENT_ERROR unauthenticated\r\n"),
              (login(b"alice", b"newpass"), b"STORED\r\n"),
              (b"get k\r\n", b"END\r\n")]]
    got, want = [], None
    for prog, who in [(mctest.SERVER, "ours")] + (
            [(REFERENCE, "memcached")] if ref_ok else []):
        sock = os.path.join(d, "%s.sock" % who)
        s = Server(["-Y", path], unix=sock, program=prog)
        (got if who == "ours" else []).extend(run_session(None, steps, sock))
        if who == "memcached":
            want = run_session(None, steps, sock)
        s.stop()
    compare(t, "-Y over a unix socket", steps, got, want)


# ---- start-up ----

def start(program, args):
    """(exit status, stderr) of a server that should refuse to start."""
    try:
        p = subprocess.run([program] + mctest.root_args() + [
            "-p", str(mctest.free_port()), "-l", "127.0.0.1"] + args,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=10)
        return p.returncode, p.stderr.decode("latin1", "replace")
    except subprocess.TimeoutExpired:
        return "still running", ""


def test_startup(t, d, ref_ok, sasl):
    users = os.path.join(d, "users")
    with open(users, "wb") as f:
        f.write(USERS)
    bad = os.path.join(d, "malformed")
    with open(bad, "wb") as f:
        f.write(b"alice:secret\n\nbob:x\n")
    cases = [
        (["-Y", users, "-B", "binary"], 64, "ERROR: You cannot allow the "
         "BINARY protocol while using ascii authentication tokens.\n"),
        (["-Y", users, "-B", "auto"], 64, "ERROR: You cannot allow the "
         "BINARY protocol while using ascii authentication tokens.\n"),
        (["-Y", users, "-U", "0", "-U", str(mctest.free_port())], 64,
         "Cannot use UDP with ascii authentication enabled (-U 0 to "
         "disable)\n"),
        (["-Y", os.path.join(d, "missing")], 1, None),
        (["-Y", bad], 1, "Authfile [%s] has a malformed entry. Should be "
         "'user:password'" % bad),
    ]
    if sasl:
        cases += [
            (["-S", "-B", "ascii"], 64, "ERROR: You cannot allow the ASCII "
             "protocol while using SASL.\n"),
            (["-S", "-B", "auto"], 64, "ERROR: You cannot allow the ASCII "
             "protocol while using SASL.\n"),
            (["-S", "-U", str(mctest.free_port())], 64, "ERROR: Cannot "
             "enable UDP while using binary SASL authentication.\n"),
        ]
    for args, code, msg in cases:
        name = " ".join(a if a not in (users, bad) else "FILE" for a in args)
        st, text = start(mctest.SERVER, args)
        t.eq("%s: exit status" % name, st, code)
        if msg:
            t.check("%s: says %r" % (name, msg), text.startswith(msg), text)
        if ref_ok:
            rst, rtext = start(REFERENCE, args)
            t.eq("%s: exit status as memcached's" % name, st, rst)
            if msg:
                t.check("%s: memcached says it too" % name,
                        rtext.startswith(msg.rstrip("\n")), rtext)


# ---- -S ----

def plain(user, password):
    return b"\0" + user + b"\0" + password


def sasl_steps():
    ok = res(SASL_AUTH, value=b"Authenticated")
    return [
        [(req(VERSION), res(VERSION, value=b"1.6.18")),
         (req(SASL_LIST), res(SASL_LIST, value=MECHS)),
         (req(SASL_AUTH, b"PLAIN", value=plain(b"testuser", b"bad")),
          auth_fail(SASL_AUTH)),
         (req(SASL_STEP, b"PLAIN", value=b"more"), auth_fail(SASL_STEP)),
         (req(SASL_AUTH, b"M" * 33, value=b"abc", opaque=7),
          err(SASL_AUTH, EINVAL, opaque=7)),
         (req(SASL_AUTH, b"NOSUCHMECH", value=b"x"), auth_fail(SASL_AUTH)),
         (req(SASL_AUTH, b"PLAIN", value=plain(b"testuser", b"testpass"),
              opaque=9), res(SASL_AUTH, value=b"Authenticated", opaque=9)),
         (req(SET, b"k", sx(3), b"val"), res(SET, cas=1)),
         (req(GET, b"k"), res(GET, extras=fl(3), value=b"val", cas=1)),
         (req(NOOP), res(NOOP))],
        [(req(GET, b"k", opaque=5), res(GET, AUTH_ERROR,
                                         value=b"Auth failure.",
                                         opaque=5) + EOF)],
        [(req(SET, b"k", sx(), b"value"), auth_fail(SET) + EOF)],
        [(req(NOOP), auth_fail(NOOP) + EOF)],
        [(req(STAT), auth_fail(STAT) + EOF)],
        # Before the login, the login check comes before any other.
        [(req(0x55, b"k"), auth_fail(0x55) + EOF)],
        [(req(GET, b"k" * 300), auth_fail(GET) + EOF)],
        [(req(SASL_LIST, value=b"x"), err(SASL_LIST, EINVAL) + EOF)],
        [(req(SASL_AUTH, b"PLAIN", extras=b"abcd"),
          err(SASL_AUTH, EINVAL) + EOF)],
        [(b"get k\r\n", b""),  # a binary header is 24 bytes
         (b"get k\r\n" * 3, EOF)],
        [(req(SASL_AUTH, b"PLAIN", value=plain(b"testuser", b"testpass")),
          ok),
         (req(SASL_LIST), res(SASL_LIST, value=MECHS)),
         (req(GET, b"k"), auth_fail(GET) + EOF)],
        [(req(SASL_AUTH, b"PLAIN", value=plain(b"nobody", b"testpass")),
          auth_fail(SASL_AUTH)),
         (req(SASL_AUTH, b"PLAIN", value=plain(b"testuser", b"")),
          auth_fail(SASL_AUTH)),
         (req(SASL_AUTH, b"PLAIN"), res(SASL_AUTH, 0x21))],  # CONTINUE
    ]


def bin_stats(port):
    """auth_cmds and auth_errors of a -S server (after a login)."""
    c = Conn(type("S", (), {"port": port}))
    c.exchange(req(SASL_AUTH, b"PLAIN", value=plain(b"testuser",
                                                     b"testpass")), 37)
    c.send(req(STAT))
    st = {}
    while True:
        head = c.read(24)
        kl, bl = struct.unpack(">H", head[2:4])[0], struct.unpack(
            ">I", head[8:12])[0]
        body = c.read(bl)
        if kl == 0:
            break
        st[body[:kl].decode()] = body[kl:].decode()
    c.close()
    return st.get("auth_cmds"), st.get("auth_errors")


def cram_md5(port, user, password):
    """A CRAM-MD5 login (SASL_AUTH, a challenge, SASL_STEP), then a GET:
    [(status, body)] of the three replies."""
    c = Conn(type("S", (), {"port": port}))
    out = []

    def packet():
        head = c.read(24)
        body = c.read(struct.unpack(">I", head[8:12])[0])
        out.append((struct.unpack(">H", head[6:8])[0], body))
        return body

    c.send(req(SASL_AUTH, b"CRAM-MD5"))
    challenge = packet()
    digest = hmac.new(password, challenge, "md5").hexdigest().encode()
    c.send(req(SASL_STEP, b"CRAM-MD5", value=user + b" " + digest))
    packet()
    c.send(req(GET, b"k"))
    packet()
    c.close()
    return out


def sasl_login(port, user, password):
    p = subprocess.run([SASL_LOGIN, str(port), user, password, "lk", "lv"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=30)
    return p.returncode, p.stdout.decode()


def test_sasl(t, d, ref_ok):
    db = os.path.join(d, "sasldb")
    with open(os.path.join(d, "memcached.conf"), "w") as f:
        f.write("mech_list: plain cram-md5\nsasldb_path: %s\n" % db)
    p = subprocess.run(["saslpasswd2", "-a", "memcached", "-c", "-p", "-f",
                        db, "testuser"], input=b"testpass",
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if not t.check("saslpasswd2 made the database (package sasl2-bin)",
                   p.returncode == 0, p.stderr):
        return
    os.environ["SASL_CONF_PATH"] = d
    try:
        srv, ref = side_by_side(t, "-S", ["-S", "-t", "2"], sasl_steps(),
                                ref_ok)
        for s, who in [(srv, "ours")] + ([(ref, "memcached")] if ref
                                         else []):
            (st1, chal), *rest = cram_md5(s.port, b"testuser", b"testpass")
            t.check("CRAM-MD5 (%s): a challenge to continue with" % who,
                    st1 == AUTH_CONTINUE and chal.startswith(b"<"), chal)
            t.eq("CRAM-MD5 (%s): SASL_STEP logs in, then GET" % who, rest,
                 [(0, b"Authenticated"), (0, fl(3) + b"val")])
        ours = bin_stats(srv.port)
        t.eq("-S: auth_cmds, auth_errors", ours, ("9", "5"))
        if ref:
            t.eq("-S: auth counters as memcached's", ours,
                 bin_stats(ref.port))
        for s, who in [(srv, "ours")] + ([(ref, "memcached")] if ref
                                         else []):
            st, out = sasl_login(s.port, "testuser", "testpass")
            t.eq("libmemcached SASL login (%s)" % who, (st, out),
                 (0, "set: SUCCESS\nget: SUCCESS lv\n"))
            st, out = sasl_login(s.port, "testuser", "wrong")
            t.eq("libmemcached SASL, wrong password: refused (%s)" % who,
                 st, 1)
            t.check("libmemcached SASL, wrong password: not stored (%s)" %
                    who, "get: SUCCESS" not in out, out)
        if ref:
            t.eq("libmemcached, wrong password: as with memcached",
                 sasl_login(srv.port, "testuser", "wrong"),
                 sasl_login(ref.port, "testuser", "wrong"))
            ref.stop()
        t.check("-S: server alive", srv.alive())
        srv.stop()
    finally:
        del os.environ["SASL_CONF_PATH"]


def test_pwdb(t, d):
    """$MEMCACHED_SASL_PWDB (memcached's --enable-sasl-pwdb; not in
    Debian's build, so ours only): PLAIN against a file of user:password
    lines, read at every login, without any sasldb."""
    conf = os.path.join(d, "pwdb-conf")
    os.mkdir(conf)
    with open(os.path.join(conf, "memcached.conf"), "w") as f:
        f.write("mech_list: plain\n")
    pwdb = os.path.join(d, "pwdb")
    with open(pwdb, "wb") as f:
        f.write(b"pwuser:pw:more fields\nother:x\n")
    os.environ.update(SASL_CONF_PATH=conf, MEMCACHED_SASL_PWDB=pwdb)
    try:
        srv = Server(["-S"])
    finally:
        del os.environ["SASL_CONF_PATH"], os.environ["MEMCACHED_SASL_PWDB"]
    ok = res(SASL_AUTH, value=b"Authenticated")
    steps = [[(req(SASL_AUTH, b"PLAIN", value=plain(b"pwuser", b"pw")), ok),
              (req(GET, b"k"), res(GET, 1, value=b"Not found"))],
             [(req(SASL_AUTH, b"PLAIN", value=plain(b"pwuser", b"p")),
               auth_fail(SASL_AUTH))],
             [(req(SASL_AUTH, b"PLAIN", value=plain(b"pwuser", b"pwx")),
               auth_fail(SASL_AUTH))],
             [(req(SASL_AUTH, b"PLAIN", value=plain(b"other", b"x")), ok)],
             [(req(SASL_AUTH, b"PLAIN", value=plain(b"nobody", b"x")),
               auth_fail(SASL_AUTH))]]
    compare(t, "MEMCACHED_SASL_PWDB", steps, run_session(srv.port, steps),
            None)
    with open(pwdb, "wb") as f:
        f.write(b"pwuser:new\n")
    steps = [[(req(SASL_AUTH, b"PLAIN", value=plain(b"pwuser", b"new")),
               ok)]]
    compare(t, "MEMCACHED_SASL_PWDB, rewritten", steps,
            run_session(srv.port, steps), None)
    srv.stop()


def main():
    t = Tally("proto_auth")
    ref_ok = t.check("reference memcached installed (package memcached)",
                     os.access(REFERENCE, os.X_OK))
    st, text = start(mctest.SERVER, ["-S", "-B", "binary", "-p", "-1"])
    sasl = "not built with SASL support" not in text
    if not sasl:
        t.eq("a build without SASL: -S refused with memcached's message",
             (st, text), (64, "This server is not built with SASL "
                              "support.\n"))
    d = tempfile.mkdtemp(prefix="proto-auth-")
    try:
        t.run(test_ascii, d, ref_ok)
        t.run(test_startup, d, ref_ok, sasl)
        if sasl:
            t.run(test_sasl, d, ref_ok)
            t.run(test_pwdb, d)
    finally:
        shutil.rmtree(d, True)
    t.finish()


if __name__ == "__main__":
    main()
