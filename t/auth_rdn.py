#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/auth_rdn.py - an authenticating server's rdn handshake wants a login.

memcached -Y FILE (and -S) with --rdn-port: the handshake (docs/wire.md)
answers nothing but REJECT -EACCES to a connection that has not sent an
AUTH that passes (HELLO, REFRESH, RESUME alike), refuses a wrong login and
a malformed one, takes a good one once, and counts refusals in
rdn_auth_failures. librdn through rdn-cli -a: the right login reads a key
through the NIC; none or a wrong one fails with "Permission denied".
With -S the same login is checked against SASL's password database
(saslpasswd2). A server without -Y/-S takes any AUTH. --rdn-baselines,
which hands out table keys to anyone, is refused with -Y.
"""
import errno
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mctest  # noqa: E402
import rdnwire as w  # noqa: E402
from offload_env import (Driver, Nicd, RestartableServer,  # noqa: E402
                         forged_resume, start_server)

CLI = os.path.join(mctest.TOP_BUILDDIR, "rdn", "librdn", "rdn-cli")
AUTH, AUTH_OK = w.RDN_MSG_AUTH, w.RDN_MSG_AUTH_OK
USER = b"rdnuser"


def auth_msg(user, password, user_len=None, pass_len=None, extra=b""):
    head = w.LAYOUTS["rdn_auth"].pack(
        user_len=len(user) if user_len is None else user_len,
        pass_len=len(password) if pass_len is None else pass_len)
    return w.msg(AUTH, head + user + password + extra)


def hello():
    return w.LAYOUTS["rdn_hello"].pack(buf_addr=0x10000, buf_rkey=1,
                                       slot_size=1 << 21, depth=4)


def exchange(port, *msgs):
    """Sends msgs, one after the other, on a new handshake connection:
    the replies, one per message (None once the server hung up)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    out = []
    try:
        for m in msgs:
            s.sendall(m)
            out.append(w.read_msg(s))
    except OSError:
        out += [None] * (len(msgs) - len(out))
    finally:
        s.close()
    return out


def rejected(reply):
    status = w.reject_status(reply)
    return None if status is None else -status


def reject_text(reply):
    return w.LAYOUTS["rdn_reject"].unpack(reply[1])["msg"].split(b"\0")[0] \
        if reply and reply[0] == w.RDN_MSG_REJECT else None


def cli(srv, port, key, login=None):
    """rdn-cli -v get key: (exit status, stdout, stderr). port None: the
    RDMA port found in the server's stats (--servers)."""
    cmd = [CLI, "-v"] + (["-p", str(port), "-t", str(srv.port)] if port else
                         ["--servers", "--SERVER=127.0.0.1:%d" % srv.port])
    if login is not None:
        cmd += ["-a", login]
    p = subprocess.run(cmd + ["get", key], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stdout, p.stderr.decode("latin1", "replace")


def login_file(d, name, user, password):
    path = os.path.join(d, name)
    with open(path, "wb") as f:
        f.write(user + b":" + password + b"\n")
    return path


def rdn_stat(srv, name, login=None):
    c = mctest.Client(srv)
    if login:
        data = login[0] + b" " + login[1]
        c.send(b"set a 0 0 %d\r\n%s\r\n" % (len(data), data))
        c.line()
    v = c.stats().get(name)
    c.close()
    return v


def test_ascii_auth(t, d):
    """-Y: the handshake wants the file's login."""
    pw = b"s3cret:colon"
    authfile = login_file(d, "authfile2", USER, pw)
    good = login_file(d, "good2", USER, pw)
    srv, port = start_server(["-Y", authfile])
    c = mctest.Client(srv)
    data = USER + b" " + pw
    c.send(b"set a 0 0 %d\r\n%s\r\n" % (len(data), data))
    t.eq("-Y: ASCII login", c.line(), b"STORED\r\n")
    t.eq("-Y: set after login", c.cmd(b"set k 0 0 5\r\nhello\r\n", 8),
         b"STORED\r\n")
    c.close()

    for name, m in (("HELLO", w.msg(w.RDN_MSG_HELLO, hello())),
                    ("REFRESH", w.msg(w.RDN_MSG_REFRESH)),
                    ("RESUME", w.msg(w.RDN_MSG_RESUME, w.LAYOUTS[
                        "rdn_resume"].pack(token=1, client_id=1)))):
        r = exchange(port, m, w.msg(w.RDN_MSG_REFRESH))
        t.eq("no login: %s rejected" % name, rejected(r[0]), errno.EACCES)
        t.eq("no login: %s reason" % name, reject_text(r[0]),
             b"authentication required")
        t.eq("no login: %s then closed" % name, r[1], None)
    r = exchange(port, auth_msg(USER, b"wrong"), w.msg(w.RDN_MSG_REFRESH))
    t.eq("wrong password: rejected", rejected(r[0]), errno.EACCES)
    t.eq("wrong password: reason", reject_text(r[0]),
         b"authentication failure")
    t.eq("wrong password: closed", r[1], None)
    r = exchange(port, auth_msg(b"nobody", pw))
    t.eq("unknown user: rejected", rejected(r[0]), errno.EACCES)
    r = exchange(port, auth_msg(USER, pw[:-1]))
    t.eq("password prefix: rejected", rejected(r[0]), errno.EACCES)
    r = exchange(port, auth_msg(USER, pw + b"x"))
    t.eq("longer password: rejected", rejected(r[0]), errno.EACCES)
    for name, m in (("short", w.msg(AUTH, b"\x01\x00")),
                    ("no user", auth_msg(b"", pw)),
                    ("lengths that lie", auth_msg(USER, pw, pass_len=3)),
                    ("bytes after the password",
                     auth_msg(USER, pw, extra=b"x")),
                    ("user too long", auth_msg(b"u" * 256, pw))):
        r = exchange(port, m)
        t.eq("malformed AUTH (%s): rejected" % name, rejected(r[0]),
             errno.EPROTO)
    r = exchange(port, auth_msg(USER, pw), w.msg(w.RDN_MSG_REFRESH),
                 auth_msg(USER, pw))
    t.eq("good login: AUTH_OK", r[0], (AUTH_OK, b""))
    t.check("good login: then the geometry",
            r[1] is not None and r[1][0] == w.RDN_MSG_GEOMETRY)
    t.eq("a second AUTH: closed", r[2], None)
    failures = int(rdn_stat(srv, "rdn_auth_failures", (USER, pw)))
    t.eq("refusals counted in rdn_auth_failures", failures, 7)

    st, out, err = cli(srv, port, "k", good)
    t.eq("rdn-cli -a: found", (st, out), (0, b"hello\n"))
    t.check("rdn-cli -a: through the NIC", "k: nic" in err, err)
    st, out, err = cli(srv, None, "k", good)
    t.eq("rdn-cli --servers -a: found", (st, out), (0, b"hello\n"))
    t.check("rdn-cli --servers -a: its stats (after a login) name the "
            "RDMA port", "k: nic" in err, err)
    st, out, err = cli(srv, port, "k")
    t.eq("rdn-cli without a login: error", st, 2)
    t.check("rdn-cli without a login: permission denied",
            "Permission denied" in err, err)
    st, out, err = cli(srv, port, "k", login_file(d, "bad", USER, b"wrong"))
    t.eq("rdn-cli with a wrong login: error", st, 2)
    t.check("rdn-cli with a wrong login: permission denied",
            "Permission denied" in err, err)
    t.check("server alive", srv.alive())
    srv.stop()

    p = subprocess.run([mctest.SERVER] + mctest.root_args() + [
        "-p", str(mctest.free_port()), "-Y", authfile, "--rdn-port",
        str(mctest.free_port()), "--rdn-baselines", str(mctest.free_port())],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=30)
    t.check("-Y --rdn-baselines: refused", p.returncode != 0)
    t.check("-Y --rdn-baselines: says why",
            b"baselines have no login" in p.stderr, p.stderr)


def sasl_user(db, user, password):
    """saslpasswd2 adds user with password to the database db."""
    return subprocess.run(["saslpasswd2", "-a", "memcached", "-c", "-p",
                           "-f", db, user.decode()], input=password,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def sasl_db(t, d, name, password):
    """A SASL database in d holding USER with password, and SASL_CONF_PATH
    naming it for the -S servers started next; False if saslpasswd2
    failed (a check says so)."""
    db = os.path.join(d, name)
    with open(os.path.join(d, "memcached.conf"), "w") as f:
        f.write("mech_list: plain\nsasldb_path: %s\n" % db)
    p = sasl_user(db, USER, password)
    if not t.check("saslpasswd2 made a database (package sasl2-bin)",
                   p.returncode == 0, p.stderr):
        return False
    os.environ["SASL_CONF_PATH"] = d
    return True


def test_sasl(t, d):
    """-S: the handshake's login is checked against SASL's database."""
    if not sasl_db(t, d, "sasldb", b"saslpw"):
        return
    users = [b"u" * n for n in range(1, 17)]
    for u in users:
        p = sasl_user(os.path.join(d, "sasldb"), u, b"saslpw")
        t.eq("saslpasswd2 added %s" % u.decode(), p.returncode, 0)
    srv, port = start_server(["-S"])
    r = exchange(port, w.msg(w.RDN_MSG_HELLO, hello()))
    t.eq("-S, no login: rejected", rejected(r[0]), errno.EACCES)
    r = exchange(port, auth_msg(USER, b"wrong"))
    t.eq("-S, wrong password: rejected", rejected(r[0]), errno.EACCES)
    r = exchange(port, auth_msg(USER, b"saslpw"), w.msg(w.RDN_MSG_REFRESH))
    t.eq("-S, good login: AUTH_OK", r[0], (AUTH_OK, b""))
    t.check("-S, good login: then the geometry",
            r[1] is not None and r[1][0] == w.RDN_MSG_GEOMETRY)
    # The password reaches SASL with its length; what follows it in the
    # server's receive buffer (its end: heap bytes) must not count.
    refused = [len(u) for u in users if exchange(
        port, auth_msg(u, b"saslpw"))[0] != (AUTH_OK, b"")]
    t.eq("-S: good logins of users 1..%d bytes long all pass" % len(users),
         refused, [])
    st, out, err = cli(srv, port, "nokey",
                       login_file(d, "sgood", USER, b"saslpw"))
    t.check("-S: rdn-cli -a gets through the handshake (a NIC miss)",
            st == 1 and "nokey: nic" in err, err)
    st, out, err = cli(srv, None, "nokey",
                       login_file(d, "sgood", USER, b"saslpw"))
    t.check("-S: rdn-cli --servers -a finds the RDMA port (binary STAT "
            "\"rdn\" after a SASL login) and uses it",
            st == 1 and "nokey: nic" in err, err)
    st, out, err = cli(srv, port, "nokey",
                       login_file(d, "sbad", USER, b"nope"))
    t.check("-S: rdn-cli with a wrong login: permission denied",
            st == 2 and "Permission denied" in err, err)
    srv.stop()
    # memcached's own password file instead of a sasldb.
    pwdb = os.path.join(d, "pwdb")
    with open(pwdb, "wb") as f:
        f.write(USER + b":filepw\n")
    with open(os.path.join(d, "memcached.conf"), "w") as f:
        f.write("mech_list: plain\n")
    os.environ["MEMCACHED_SASL_PWDB"] = pwdb
    srv, port = start_server(["-S"])
    del os.environ["MEMCACHED_SASL_PWDB"], os.environ["SASL_CONF_PATH"]
    r = exchange(port, auth_msg(USER, b"filepw"))
    t.eq("-S with MEMCACHED_SASL_PWDB: its login passes", r[0],
         (AUTH_OK, b""))
    r = exchange(port, auth_msg(USER, b"saslpw"))
    t.eq("-S with MEMCACHED_SASL_PWDB: another password is refused",
         rejected(r[0]), errno.EACCES)
    srv.stop()


def test_resume(t, d):
    """A client of a -Y server that died resumes its handshake connection
    with the restarted one, logging in again first (RESUME too wants the
    login); a RESUME without one is refused."""
    pw = b"resumepw"
    srv = RestartableServer(["-Y", login_file(d, "rfile", USER, pw)])
    try:
        if not t.check("resume: server started", srv.start()):
            return
        c = srv.client()
        c.send(login(USER, pw) + b"set k 0 0 2\r\nv1\r\n")
        t.eq("resume: login and set", c.read(16), b"STORED\r\nSTORED\r\n")
        c.close()
        drv = Driver(srv, srv.rdn_port, login=(USER.decode(), pw.decode()))
        t.eq("resume: a NIC hit", drv.get1(b"k")[:2], (0, "nic"))
        srv.end(signal.SIGKILL)
        if not t.check("resume: restarted on the same ports", srv.start()):
            drv.close()
            return
        end = time.time() + 10
        while time.time() < end and not (drv.get1(b"k")[0] == 0 and
                                         drv.stats()["resumes"] >= 1):
            time.sleep(0.1)
        t.check("resume: the client resumed (after its login)",
                drv.stats()["resumes"] >= 1)
        hits = [drv.get1(b"k")[:2] for _ in range(10)]
        time.sleep(1.2)  # LRU reports (HITS) go at least once a second
        hits += [drv.get1(b"k")[:2] for _ in range(10)]
        t.eq("resume: the resumed connection stays up (its HITS and "
             "REFRESH count as logged in)", hits, [(0, "nic")] * 20)
        t.eq("resume: still served by the NIC", drv.get1(b"k")[:2],
             (0, "nic"))
        t.eq("resume: no reconnection", drv.stats()["reconnects"], 0)
        t.eq("resume: a RESUME without a login is refused",
             forged_resume(srv.rdn_port, drv.stats()["id"], 1),
             -errno.EACCES)
        drv.close()
    finally:
        srv.close()


def cli_cmd(srv, args, login=None):
    """rdn-cli --servers (the server's TCP port) args: (status, out, err)."""
    cmd = [CLI, "-v", "--servers", "--SERVER=127.0.0.1:%d" % srv.port]
    if login is not None:
        cmd += ["-a", login]
    p = subprocess.run(cmd + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stdout, p.stderr.decode("latin1", "replace")


def tcp_logins(t, d, what, srv):
    """rdn-cli set, get (librdn's TCP path: the server has no RDMA port)
    and stats against an authenticating server: the right login works on
    every one; none or a wrong one is refused with a clear error and
    prints no data."""
    good = login_file(d, "tgood", USER, b"tcp-pw")
    bad = login_file(d, "tbad", USER, b"not-it")
    st, out, err = cli_cmd(srv, ["set", "tk", "tcp-value"], good)
    t.eq("%s: rdn-cli -a set" % what, (st, err), (0, ""))
    st, out, err = cli_cmd(srv, ["get", "tk"], good)
    t.eq("%s: rdn-cli -a get over TCP: the value" % what, (st, out),
         (0, b"tcp-value\n"))
    t.check("%s: ... asked over TCP" % what, "tk: tcp" in err, err)
    st, out, err = cli_cmd(srv, ["stats"], good)
    t.check("%s: rdn-cli -a stats" % what,
            st == 0 and b"\npid " in out and b"\nrdn_enabled no" in out,
            (st, out[:200], err))
    for name, login in (("no login", None), ("a wrong login", bad)):
        st, out, err = cli_cmd(srv, ["get", "tk"], login)
        t.eq("%s: get with %s: an error, no value" % (what, name),
             (st, out), (2, b""))
        t.check("%s: get with %s: permission denied" % (what, name),
                "tk: Permission denied" in err, err)
        st, out, err = cli_cmd(srv, ["set", "tk", "other"], login)
        t.check("%s: set with %s: refused" % (what, name),
                st == 2 and "rdn-cli: set tk:" in err, (st, err))
        st, out, err = cli_cmd(srv, ["stats"], login)
        t.check("%s: stats with %s: refused, no stats" % (what, name),
                st == 2 and b"pid" not in out, (st, out[:200], err))
    st, out, err = cli_cmd(srv, ["get", "tk"], good)
    t.eq("%s: the value is unchanged" % what, (st, out),
         (0, b"tcp-value\n"))
    t.check("%s: server alive" % what, srv.alive())


def test_tcp_login_ascii(t, d):
    """-Y without --rdn-port: librdn's TCP GETs log in with -Y's ASCII
    login."""
    srv = mctest.Server(["-Y", login_file(d, "tfile", USER, b"tcp-pw")])
    tcp_logins(t, d, "-Y", srv)
    srv.stop()


def test_tcp_login_sasl(t, d):
    """-S without --rdn-port: librdn's own handle speaks the binary protocol
    with a SASL PLAIN login; so do rdn-cli's set and stats."""
    if not sasl_db(t, d, "tsasldb", b"tcp-pw"):
        return
    srv = mctest.Server(["-S"])
    del os.environ["SASL_CONF_PATH"]
    tcp_logins(t, d, "-S", srv)
    srv.stop()


def login(user, password):
    data = user + b" " + password
    return b"set a 0 0 %d\r\n%s\r\n" % (len(data), data)


def test_no_auth(t, d):
    """A server without -Y/-S takes any AUTH (a client with a login works
    everywhere) and needs none."""
    srv, port = start_server([])
    r = exchange(port, auth_msg(b"any", b"thing"), w.msg(w.RDN_MSG_REFRESH))
    t.eq("no -Y: AUTH_OK", r[0], (AUTH_OK, b""))
    t.check("no -Y: then the geometry",
            r[1] is not None and r[1][0] == w.RDN_MSG_GEOMETRY)
    r = exchange(port, w.msg(w.RDN_MSG_REFRESH))
    t.check("no -Y: no login needed",
            r[0] is not None and r[0][0] == w.RDN_MSG_GEOMETRY)
    srv.stop()


def main():
    t = mctest.Tally("auth_rdn")
    Nicd(threads=2)
    with tempfile.TemporaryDirectory(prefix="rdn-auth-") as d:
        for fn in (test_ascii_auth, test_sasl, test_resume, test_no_auth,
                   test_tcp_login_ascii, test_tcp_login_sasl):
            t.run(fn, d)
    t.finish()


if __name__ == "__main__":
    main()
