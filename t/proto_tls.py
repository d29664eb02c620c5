#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/proto_tls.py - TLS (-Z, -o ssl_*), side by side with Debian's
memcached 1.6.18 (/usr/bin/memcached, built with TLS).

A throwaway CA, two server certificates and client certificates (one
signed by the CA, one self-signed) are made with the openssl CLI in a
temporary directory; python's ssl module is the client. Covered: ASCII
and binary commands over TLS (values far larger than one TLS record, and
a 1 KB ssl_wbuf_size); notls: listeners, UDP and unix sockets stay plain;
ssl_verify_mode 2 refuses a client without a certificate or with one the
CA did not sign, and serves one it signed; ssl_min_version; refresh_certs
after the files changed (new connections get the new certificate, a
failed reload keeps the old one) with memcached's replies; session cache
counters; garbage and stalled handshakes cost only their connection and
are counted; t/proto_stress.py's concurrent ASCII and binary mix over TLS;
watch streams and the -Y login over TLS; a stalled handshake and
idle_timeout; start-up errors and exit codes, "stats
settings" ssl_* lines and the names of the "stats" ssl counters as
memcached's. (The -o ssl_* parse errors are t/proto_admin.py's.)
"""
import os
import re
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mctest import (SERVER, Client, Server, Tally, free_port,  # noqa: E402
                    root_args)
import proto_bin  # noqa: E402
import proto_stress  # noqa: E402

REFERENCE = "/usr/bin/memcached"
REF_ARGS = ["-l", "127.0.0.1", "-U", "0"]
# OpenSSL's queued-error lines begin with the thread's id.
THREAD_ID = re.compile(rb"^[0-9A-F]+:error:", re.M)


def openssl(d, *args):
    subprocess.run(["openssl"] + list(args), cwd=d, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_pki(d):
    """ca.{key,crt}; srv1 and srv2 signed by it; cli (signed) and rogue
    (self-signed) client certificates. EC keys: quick to make."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
          "-nodes"]
    openssl(d, "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt",
            "-days", "2", "-subj", "/CN=redn-test-ca")
    for name in ("srv1", "srv2", "cli"):
        openssl(d, "req", *ec, "-keyout", name + ".key", "-out",
                name + ".csr", "-subj", "/CN=" + name)
        openssl(d, "x509", "-req", "-in", name + ".csr", "-CA", "ca.crt",
                "-CAkey", "ca.key", "-CAcreateserial", "-out",
                name + ".crt", "-days", "2")
    openssl(d, "req", "-x509", *ec, "-keyout", "rogue.key", "-out",
            "rogue.crt", "-days", "2", "-subj", "/CN=rogue")
    openssl(d, "pkey", "-in", "srv1.key", "-outform", "DER", "-out",
            "srv1.der")


def tls_args(d, cert="srv1", extra=""):
    opts = "ssl_chain_cert=%s/%s.crt,ssl_key=%s/%s.key" % (d, cert, d, cert)
    return ["-Z", "-o", opts + ("," + extra if extra else "")]


def client_ctx(d, cert=None, maxv=None, minv=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(os.path.join(d, "ca.crt"))
    ctx.check_hostname = False
    if cert:
        ctx.load_cert_chain(os.path.join(d, cert + ".crt"),
                            os.path.join(d, cert + ".key"))
    if maxv:
        ctx.maximum_version = maxv
    if minv:
        ctx.minimum_version = minv
    return ctx


def on(sock, cls=Client):
    """A cls (a mctest.Client) on the connected socket sock."""
    c = cls.__new__(cls)
    c.sock = sock
    c.buf = b""
    return c


def plain_client(port):
    return on(socket.create_connection(("127.0.0.1", port), timeout=10))


def tls_client(port, ctx, session=None, cls=Client):
    """A cls (a mctest.Client) whose socket speaks TLS (handshake done)."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    return on(ctx.wrap_socket(raw, session=session), cls)


def refused(c):
    """True if the server ends c instead of answering a command (TLS 1.3
    reports a refused client certificate only on the first read)."""
    try:
        c.send(b"version\r\n")
        return c.line() != b"VERSION 1.6.18\r\n"
    except (OSError, EOFError):
        return True


def cn(c):
    return dict(x[0] for x in c.sock.getpeercert()["subject"])["commonName"]


def bin_req(opcode, key=b"", value=b"", extras=b"", opaque=0):
    body = extras + key + value
    return struct.pack(">BBHBBHIIQ", 0x80, opcode, len(key), len(extras), 0,
                       0, len(body), opaque, 0) + body


def bin_resp(c):
    hdr = c.read(24)
    magic, op, klen, elen, _, status, blen, opaque, cas = struct.unpack(
        ">BBHBBHIIQ", hdr)
    body = c.read(blen)
    return magic, op, status, opaque, body[elen + klen:]


def test_commands(t, d):
    srv = Server(tls_args(d) + ["-t", "2"])
    c = tls_client(srv.port, client_ctx(d))
    t.eq("TLS 1.3 by default", c.sock.version(), "TLSv1.3")
    t.eq("server certificate", cn(c), "srv1")
    t.eq("set over TLS", c.set(b"k", b"v1", 5), b"STORED\r\n")
    t.eq("get over TLS", c.get(b"k"), (5, b"v1"))
    big = os.urandom(900 * 1024)  # 57 TLS records
    t.eq("900 KB set", c.set(b"big", big), b"STORED\r\n")
    t.eq("900 KB get", c.get(b"big"), (0, big))
    c.send(b"get k big k big\r\n")
    one = (b"VALUE k 5 2\r\nv1\r\nVALUE big 0 %d\r\n" % len(big)) + big + \
        b"\r\n"
    want = one * 2 + b"END\r\n"
    t.check("multiget of 1.8 MB", c.read(len(want)) == want)
    # A client that reads nothing while the replies pile up, then reads.
    c.send(b"get big\r\n" * 20)
    time.sleep(0.3)
    n = 0
    for _ in range(20):
        ln = c.line()
        n += ln.startswith(b"VALUE big")
        c.read(len(big) + 2)
        c.line()
    t.eq("20 replies of 900 KB read late", n, 20)
    b = tls_client(srv.port, client_ctx(d))  # its first byte: binary
    b.send(bin_req(0x01, b"bk", b"bin", struct.pack(">II", 7, 0), 11))
    t.eq("binary SET over TLS", bin_resp(b)[:4], (0x81, 0x01, 0, 11))
    b.send(bin_req(0x00, b"bk", opaque=12))
    r = bin_resp(b)
    t.eq("binary GET over TLS", (r[2], r[3], r[4]), (0, 12, b"bin"))
    b.send(bin_req(0x01, b"bb", big, struct.pack(">II", 0, 0)))
    bin_resp(b)
    b.send(bin_req(0x00, b"bb"))
    t.eq("binary 900 KB GET over TLS", bin_resp(b)[4], big)
    b.send(bin_req(0x0b, opaque=3))
    r = bin_resp(b)
    t.eq("binary VERSION", (r[2], r[4]), (0, b"1.6.18"))
    t.eq("ASCII sees the binary SET", c.get(b"bk"), (7, b"bin"))
    w = tls_client(srv.port, client_ctx(d))
    w.send(b"watch fetchers\r\n")
    t.eq("watch over TLS", w.line(), b"OK\r\n")
    c.get(b"k")
    while b"\n" not in w.buf:  # log lines end in a bare "\n"
        w._fill()
    t.check("the log stream is encrypted too",
            b"type=item_get key=k " in w.buf, w.buf)
    srv.stop()
    srv = Server(tls_args(d, extra="ssl_wbuf_size=1") + ["-t", "1"])
    c = tls_client(srv.port, client_ctx(d))
    c.set(b"big", big)
    t.eq("ssl_wbuf_size=1: 900 KB in 1 KB records", c.get(b"big"), (0, big))
    srv.stop()


def test_plain_paths(t, d):
    """notls: listeners, UDP and unix sockets stay plain."""
    plain_port = free_port()
    srv = Server(tls_args(d) + ["-l", "127.0.0.1,notls:127.0.0.1:%d" %
                                plain_port], udp=True)
    p = plain_client(plain_port)
    t.eq("notls listener speaks plain text", p.set(b"k", b"plain"),
         b"STORED\r\n")
    c = tls_client(srv.port, client_ctx(d))
    t.eq("TLS listener sees it", c.get(b"k"), (0, b"plain"))
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.settimeout(5)
    u.sendto(b"\x00\x01\x00\x00\x00\x01\x00\x00get k\r\n",
             ("127.0.0.1", srv.udp_port))
    t.eq("UDP stays plain", u.recv(2048)[8:],
         b"VALUE k 0 5\r\nplain\r\nEND\r\n")
    raw = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    raw.sendall(b"get k\r\n")
    raw.settimeout(3)
    try:
        data = raw.recv(100)
    except OSError:
        data = b""
    t.check("plain text on the TLS port gets no memcached reply",
            b"VALUE" not in data and b"END" not in data, data)
    srv.stop()
    sock = os.path.join(d, "mc.sock")
    srv = Server(tls_args(d), unix=sock)
    u = Client(srv, unix=sock)
    t.eq("unix socket stays plain under -Z", u.set(b"k", b"x"),
         b"STORED\r\n")
    srv.stop()


def test_ascii_auth(t, d):
    """-Y's login runs over TLS like any command (it then crosses the
    network encrypted)."""
    pw = os.path.join(d, "auth")
    with open(pw, "w") as f:
        f.write("alice:s3cret\n")
    srv = Server(tls_args(d) + ["-Y", pw])
    c = tls_client(srv.port, client_ctx(d))
    c.send(b"get k\r\n")
    t.eq("-Y over TLS: a command before the login",
         c.line(), b"CLIENT_ERROR unauthenticated\r\n")
    c = tls_client(srv.port, client_ctx(d))
    t.eq("-Y over TLS: the login", c.set(b"x", b"alice s3cret"),
         b"STORED\r\n")
    t.eq("-Y over TLS: then commands", c.set(b"k", b"v"), b"STORED\r\n")
    srv.stop()


def test_verify(t, d):
    ca = "ssl_ca_cert=%s/ca.crt" % d
    srv = Server(tls_args(d, extra="ssl_verify_mode=2," + ca))
    before = int(tls_client(srv.port, client_ctx(d, "cli")).stats()[
        "ssl_handshake_errors"])
    t.check("verify_mode 2 refuses a client without certificate",
            refused(tls_client(srv.port, client_ctx(d))))
    try:
        rogue = refused(tls_client(srv.port, client_ctx(d, "rogue")))
    except (OSError, ssl.SSLError):
        rogue = True
    t.check("verify_mode 2 refuses a certificate the CA did not sign", rogue)
    c = tls_client(srv.port, client_ctx(d, "cli"))
    t.eq("verify_mode 2 serves a CA-signed client", c.set(b"a", b"b"),
         b"STORED\r\n")
    t.eq("both refusals are handshake errors",
         int(c.stats()["ssl_handshake_errors"]) - before, 2)
    srv.stop()
    srv = Server(tls_args(d, extra="ssl_verify_mode=1," + ca))
    c = tls_client(srv.port, client_ctx(d))
    t.eq("verify_mode 1 serves a client without certificate",
         c.set(b"a", b"b"), b"STORED\r\n")
    srv.stop()


def test_keyformat(t, d):
    srv = Server(["-Z", "-o", "ssl_chain_cert=%s/srv1.crt,ssl_key=%s/srv1.der,"
                  "ssl_keyformat=2" % (d, d)])
    c = tls_client(srv.port, client_ctx(d))
    t.eq("ssl_keyformat=2: a DER key", c.set(b"k", b"v"), b"STORED\r\n")
    srv.stop()


def test_min_version(t, d):
    srv = Server(tls_args(d, extra="ssl_min_version=3"))
    try:
        ok = not refused(tls_client(srv.port, client_ctx(
            d, maxv=ssl.TLSVersion.TLSv1_2)))
    except (OSError, ssl.SSLError):
        ok = False
    t.check("ssl_min_version=3 refuses TLS 1.2", not ok)
    c = tls_client(srv.port, client_ctx(d))
    t.eq("ssl_min_version=3 serves TLS 1.3", c.sock.version(), "TLSv1.3")
    srv.stop()
    srv = Server(tls_args(d))
    c = tls_client(srv.port, client_ctx(d, maxv=ssl.TLSVersion.TLSv1_2))
    t.eq("the default (2) serves TLS 1.2", c.sock.version(), "TLSv1.2")
    t.eq("and commands work over it", c.set(b"x", b"y"), b"STORED\r\n")
    srv.stop()


def refresh_session(program, d, args):
    """refresh_certs as the files change; returns the replies and the
    certificate names new connections saw."""
    w = os.path.join(d, "live-" + ("ref" if program else "ours"))
    shutil.rmtree(w, ignore_errors=True)
    os.mkdir(w)
    for f in ("ca.crt", "srv1.crt", "srv1.key"):
        shutil.copy(os.path.join(d, f), w)
    os.rename(os.path.join(w, "srv1.crt"), os.path.join(w, "s.crt"))
    os.rename(os.path.join(w, "srv1.key"), os.path.join(w, "s.key"))
    opts = "ssl_chain_cert=%s/s.crt,ssl_key=%s/s.key" % (w, w)
    srv = Server(args + ["-Z", "-o", opts], program=program)
    ctx = client_ctx(d)
    c = tls_client(srv.port, ctx)
    out = [cn(c)]
    shutil.copy(os.path.join(d, "srv2.crt"), os.path.join(w, "s.crt"))
    shutil.copy(os.path.join(d, "srv2.key"), os.path.join(w, "s.key"))
    out.append(c.before_mn(b"refresh_certs\r\n"))
    out.append(c.before_mn(b"refresh_certs noreply\r\n"))
    out.append(cn(tls_client(srv.port, ctx)))
    os.unlink(os.path.join(w, "s.key"))
    out.append(c.before_mn(b"refresh_certs\r\n"))
    out.append(c.before_mn(b"refresh_certs noreply\r\n"))
    with open(os.path.join(w, "s.key"), "w") as f:
        f.write("not a key\n")
    out.append(c.before_mn(b"refresh_certs\r\n"))
    shutil.copy(os.path.join(d, "srv1.key"), os.path.join(w, "s.key"))
    out.append(c.before_mn(b"refresh_certs\r\n"))  # srv2.crt with srv1.key
    n = tls_client(srv.port, ctx)
    out.append(cn(n))
    out.append(n.before_mn(b"version\r\n"))
    srv.stop()
    return [o.replace(w.encode(), b"W") if isinstance(o, bytes) else o
            for o in out]


def test_refresh(t, d, ref_ok):
    ours = refresh_session(None, d, ["-t", "2"])
    t.eq("refresh_certs: new connections get the new certificate, a "
         "failed reload keeps it", [ours[0], ours[3], ours[8]],
         ["srv1", "srv2", "srv2"])
    t.eq("refresh_certs replies OK, noreply nothing", ours[1:3],
         [b"OK\r\n", b""])
    t.eq("the connection still works", ours[9], b"VERSION 1.6.18\r\n")
    t.check("a missing key is memcached's error reply",
            ours[4].startswith(b"Error loading the key: W/s.key : error:"),
            ours[4])
    if ref_ok:
        ref = refresh_session(REFERENCE, d, REF_ARGS)
        for i in (1, 2, 4, 5, 6, 7):
            t.eq("refresh_certs reply %d as memcached" % i, ours[i], ref[i])
    srv = Server([])
    t.eq("refresh_certs without -Z",
         Client(srv).before_mn(b"refresh_certs\r\n"),
         b"Error TLS not enabled\r\n")
    srv.stop()
    # time_since_server_cert_refresh starts again at a reload.
    srv = Server(tls_args(d))
    c = tls_client(srv.port, client_ctx(d))
    time.sleep(2.1)
    old = int(c.stats()["time_since_server_cert_refresh"])
    c.before_mn(b"refresh_certs\r\n")
    new = int(c.stats()["time_since_server_cert_refresh"])
    t.check("time_since_server_cert_refresh counts, and restarts",
            old >= 2 and new <= 1, (old, new))
    srv.stop()


def test_garbage(t, d):
    """Hostile handshakes cost only their connection; with one worker, a
    stalled handshake does not hold the others up."""
    srv = Server(tls_args(d) + ["-t", "1"])
    good = tls_client(srv.port, client_ctx(d))
    base = int(good.stats()["ssl_handshake_errors"])
    payloads = [b"GET / HTTP/1.0\r\n\r\n", os.urandom(3000),
                b"\x16\x03\x01\x00\x05hello", b"\x80" * 64,
                b"\x16\x03\x03\xff\xff" + os.urandom(200) + b"\x00" * 70000]
    for p in payloads * 10:
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        try:
            s.sendall(p)
            s.settimeout(5)
            while s.recv(4096):
                pass
        except OSError:
            pass
        s.close()
    stalled = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    stalled.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01")  # half a hello
    for _ in range(5):  # connect and go: a port probe
        socket.create_connection(("127.0.0.1", srv.port)).close()
    c = tls_client(srv.port, client_ctx(d))
    t.eq("served while a handshake stalls", c.set(b"k", b"v"),
         b"STORED\r\n")
    t.eq("the old connection too", good.get(b"k"), (0, b"v"))
    stalled.close()
    time.sleep(0.2)
    st = good.stats()
    t.eq("each garbage handshake counted once, probes and the stalled "
         "one not", int(st["ssl_handshake_errors"]) - base,
         len(payloads) * 10)
    t.check("server alive", srv.alive())
    srv.stop()


def resumptions(program, d, extra, version):
    """Two resumptions in a row: whether each resumed, ssl_new_sessions."""
    args = tls_args(d, extra=extra) + (REF_ARGS if program else [])
    srv = Server(args, program=program)
    ctx = client_ctx(d, maxv=version)
    c = tls_client(srv.port, ctx)
    c.set(b"k", b"v")  # TLS 1.3 tickets arrive with the first reply
    r = tls_client(srv.port, ctx, session=c.sock.session)
    r.set(b"k", b"v")
    r2 = tls_client(srv.port, ctx, session=r.sock.session)
    out = (r.sock.session_reused, r2.sock.session_reused,
           r2.stats().get("ssl_new_sessions"))
    srv.stop()
    return out


def test_idle_handshake(t, d):
    """-o idle_timeout closes a handshake that stalls, as an idle client."""
    srv = Server(tls_args(d) + ["-o", "idle_timeout=1"])
    stalled = plain_client(srv.port)
    stalled.send(b"\x16\x03\x01\x02\x00\x01\x00\x01")
    t.check("a stalled handshake is closed by idle_timeout",
            stalled.closed_by_server(6.0))
    st = tls_client(srv.port, client_ctx(d)).stats()
    t.eq("and counted in idle_kicks", st["idle_kicks"], "1")
    srv.stop()


def test_sessions(t, d, ref_ok):
    """Resumption works with tickets whatever ssl_session_cache says (the
    same OpenSSL calls as memcached); ssl_new_sessions counts what
    OpenSSL's server cache sees, shown with ssl_session_cache only."""
    for extra in ("ssl_session_cache", ""):
        for v in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
            ours = resumptions(None, d, extra, v)
            what = "%s %s" % (extra or "no session cache", v.name)
            t.eq("%s: resumed twice" % what, ours[:2], (True, True))
            t.eq("%s: ssl_new_sessions shown with the cache only" % what,
                 ours[2] is not None, bool(extra))
            if ref_ok:
                t.eq("%s: as memcached" % what, ours,
                     resumptions(REFERENCE, d, extra, v))


def test_stress(t, d):
    """t/proto_stress.py's concurrent mix, ASCII and binary, over TLS with
    2 KB writes and connection churn."""
    ctx = client_ctx(d)

    class Ascii(proto_stress.Worker):
        def connect(self):
            return tls_client(self.srv.port, ctx)

    class Binary(proto_stress.BinWorker):
        def connect(self):
            return tls_client(self.srv.port, ctx, cls=proto_bin.BinClient)

    srv = Server(tls_args(d, extra="ssl_wbuf_size=2") +
                 ["-t", "2", "-m", "8", "-o", "hashpower=12"])
    proto_stress.run_stress(t, srv, Ascii, Binary,
                            lambda s: tls_client(s.port, ctx), 4.0)
    t.eq("no handshake failed", tls_client(srv.port, ctx).stats()[
        "ssl_handshake_errors"], "0")
    srv.stop()


def start_error(program, args):
    r = subprocess.run([program] + root_args() + args, capture_output=True,
                       timeout=20)
    return r.returncode, THREAD_ID.sub(b"TID:error:", r.stderr)


def test_startup(t, d, ref_ok):
    srv1 = ["-o", "ssl_chain_cert=%s/srv1.crt,ssl_key=%s/srv1.key" % (d, d)]
    cases = [
        ["-Z", "-p", "0"], ["-Z"], ["-Z", "-o", "ssl_chain_cert=/nonexist"],
        ["-Z", "-o", "ssl_chain_cert=/etc/hostname"],
        ["-Z", "-o", "ssl_chain_cert=%s/srv1.crt" % d],
        ["-Z", "-o", "ssl_chain_cert=%s/srv1.crt,ssl_key=%s/cli.key" % (d, d)],
        ["-Z", "-o", "ssl_chain_cert=%s/srv1.crt,ssl_key=%s/ca.crt" % (d, d)],
        ["-Z"] + srv1 + ["-o", "ssl_ca_cert=/nonexist"],
        ["-Z"] + srv1 + ["-o", "ssl_ca_cert=/etc/hostname"],
        ["-Z"] + srv1 + ["-o", "ssl_ciphers=NOSUCHCIPHER"],
        ["-Z"] + srv1 + ["-o", "ssl_keyformat=2"],
        ["-Z"] + srv1 + ["-o", "ssl_keyformat=7"],
        ["-Z", "-s", os.path.join(d, "x.sock")],
        ["-l", "notls:127.0.0.1:1"],
    ]
    for args in cases:
        rc, err = start_error(SERVER, args)
        if args[0] == "-l":
            t.eq("notls without -Z: memcached's message, exit 71",
                 (rc, err.split(b"\n")[0]),
                 (71, b"'notls' option is valid only when SSL is enabled"))
        else:
            t.eq("%s exits 64" % args, rc, 64)
        if ref_ok:
            ref_rc, ref_err = start_error(REFERENCE, args)
            t.eq("%s exit code as memcached" % args, rc, ref_rc)
            if args[0] == "-l":
                ref_err = ref_err.split(b"\n")[0] + b"\n"  # + its "Success"
                err = err.split(b"\n")[0] + b"\n"
            t.eq("%s stderr as memcached" % args, err, ref_err)


def ssl_lines(c, sub=b""):
    c.send(b"stats" + (b" " + sub if sub else b"") + b"\r\n")
    return [ln for ln in c.lines_until() if ln.startswith(b"STAT ssl_") or
            ln.startswith(b"STAT time_since_server_cert")]


def test_stats(t, d, ref_ok):
    opts = ("ssl_verify_mode=3,ssl_ca_cert=%s/ca.crt,ssl_session_cache,"
            "ssl_min_version=3,ssl_wbuf_size=4,ssl_ciphers=HIGH,"
            "ssl_keyformat=1,ssl_kernel_tls" % d)
    runs = [([], None), (tls_args(d), "plain"),
            (tls_args(d, extra=opts), "cli")]
    for args, cert in runs:
        got = {}
        for program in [None] + ([REFERENCE] if ref_ok else []):
            extra = ["-t", "2"] if program is None else REF_ARGS
            srv = Server(args + extra, program=program)
            if cert is None:
                c = Client(srv)
            else:
                c = tls_client(srv.port, client_ctx(
                    d, cert if cert != "plain" else None))
            settings = ssl_lines(c, b"settings")
            general = [re.sub(rb" \d+\r\n$", b" N\r\n", ln)
                       for ln in ssl_lines(c)]
            got[program] = (settings, general)
            srv.stop()
        ours = got[None]
        t.eq("%s: stats settings has 11 ssl_ lines" % args, len(ours[0]), 11)
        t.eq("%s: stats has %d ssl counters" % (args, len(ours[1])),
             len(ours[1]), [0, 2, 3][runs.index((args, cert))])
        if ref_ok:
            t.eq("%s: stats settings ssl_ lines as memcached" % args,
                 ours[0], got[REFERENCE][0])
            t.eq("%s: stats ssl counters as memcached's" % args, ours[1],
                 got[REFERENCE][1])


def main():
    t = Tally("proto_tls")
    if not t.check("openssl CLI installed", shutil.which("openssl")):
        t.finish()
    ref_ok = os.access(REFERENCE, os.X_OK)
    t.check("reference memcached installed", ref_ok)
    d = tempfile.mkdtemp(prefix="proto_tls.")
    try:
        make_pki(d)
        t.run(test_commands, d)
        t.run(test_plain_paths, d)
        t.run(test_ascii_auth, d)
        t.run(test_verify, d)
        t.run(test_keyformat, d)
        t.run(test_min_version, d)
        t.run(test_refresh, d, ref_ok)
        t.run(test_garbage, d)
        t.run(test_idle_handshake, d)
        t.run(test_sessions, d, ref_ok)
        t.run(test_stress, d)
        t.run(test_startup, d, ref_ok)
        t.run(test_stats, d, ref_ok)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
