#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/install_tree.py - `make install DESTDIR=<scratch>` of this build tree:
every file in its place and nothing unexpected, librdn.so exports exactly
client.h's functions under their versions (RDN_0.1, and RDN_0.2 for the
GETs into a reused buffer), the installed man pages render,
and a program built against the installed tree alone (t/install_client.c,
`pkg-config --cflags --libs librdn` with the scratch tree as the sysroot)
links and reads a key through the NIC of a server started from the build
tree, on a private rdn-nicd; the installed server, starting an rdn-nicd on
demand, starts an installed one. Python 3 standard library only.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mctest  # noqa: E402
import offload_env  # noqa: E402

TOP = mctest.TOP_BUILDDIR
SRC = os.environ.get("top_srcdir", os.path.join(TOP))
API_01 = sorted(["rdn_client_id", "rdn_client_stats", "rdn_close",
                 "rdn_connect", "rdn_connect_config", "rdn_connect_memc",
                 "rdn_connect_opts", "rdn_get", "rdn_last_reason",
                 "rdn_last_source", "rdn_memc", "rdn_mget",
                 "rdn_server_count", "rdn_server_info"])
API_02 = sorted(["rdn_get_value", "rdn_value_free"])
API = sorted(API_01 + API_02)
EXPECTED = {
    "bindir": ["redn-memcached", "rdn-cli", "rdn-bench", "rdn-trace",
               "rdn-hwcheck", "rdn-pingpong"],
    "sbindir": ["rdn-nicd"],
    "libdir": ["librdn.so", "librdn.so.0", "librdn.so.0.0.0", "librdn.la"],
    "includedir": ["rdn/librdn/client.h"],
    "pkgconfigdir": ["librdn.pc"],
    "man1dir": ["redn-memcached.1", "rdn-cli.1", "rdn-bench.1",
                "rdn-trace.1", "rdn-hwcheck.1", "rdn-pingpong.1"],
    "man3dir": ["librdn.3"] + [f + ".3" for f in API],
    "man8dir": ["rdn-nicd.8"],
    "systemdsystemunitdir": ["rdn-nicd.service", "redn-memcached.service"],
    "defaultdir": ["rdn-nicd", "redn-memcached"],
    "sysusersdir": ["redn-memcached.conf"],
}


def make(*args):
    env = dict(os.environ)
    for v in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):  # not the check's make
        env.pop(v, None)
    return subprocess.run(["make", "-s", "-C", TOP] + list(args), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def installed_files(root):
    out = set()
    for d, _, names in os.walk(root):
        for n in names:
            out.add(os.path.relpath(os.path.join(d, n), root))
    return out


def test_files(t, root, dirs):
    want = {os.path.join(dirs[k], f).lstrip("/")
            for k, files in EXPECTED.items() for f in files}
    got = installed_files(root)
    t.eq("files missing", sorted(want - got), [])
    t.eq("files not expected", sorted(got - want), [])
    lib = os.path.join(root, dirs["libdir"].lstrip("/"))
    t.eq("librdn.so.0 -> librdn.so.0.0.0",
         os.readlink(os.path.join(lib, "librdn.so.0")), "librdn.so.0.0.0")
    r = subprocess.run(["nm", "-D", "--defined-only",
                        os.path.join(lib, "librdn.so.0.0.0")],
                       stdout=subprocess.PIPE)
    for ver, api in (("0.1", API_01), ("0.2", API_02)):
        syms = sorted(re.findall(r" T (\w+)@@RDN_%s$" % re.escape(ver),
                                 r.stdout.decode(), re.M))
        t.eq("librdn exports client.h's functions at RDN_%s" % ver, syms,
             api)
    others = [ln for ln in r.stdout.decode().splitlines()
              if not re.search(r" (T \w+@@RDN_0\.[12]|A RDN_0\.[12])$", ln)]
    t.eq("librdn exports nothing else", others, [])
    for key in ("bindir", "sbindir"):
        for f in EXPECTED[key]:
            p = os.path.join(root, dirs[key].lstrip("/"), f)
            t.check("%s executable" % f, os.access(p, os.X_OK))
    unit = os.path.join(root, dirs["systemdsystemunitdir"].lstrip("/"),
                        "redn-memcached.service")
    with open(unit) as f:
        text = f.read()
    t.check("the server unit runs the installed server",
            "ExecStart=%s/redn-memcached " % dirs["bindir"] in text, text)
    t.check("the server unit needs rdn-nicd.service",
            "Requires=rdn-nicd.service" in text, text)


def test_units(t, root, dirs):
    """systemd-analyze (where systemd is installed) accepts the units: its
    only complaint is that the commands are not installed yet."""
    if not shutil.which("systemd-analyze"):
        print("no systemd-analyze: units not verified")
        return
    unitdir = os.path.join(root, dirs["systemdsystemunitdir"].lstrip("/"))
    r = subprocess.run(["systemd-analyze", "verify", "--man=no"] +
                       [os.path.join(unitdir, u)
                        for u in EXPECTED["systemdsystemunitdir"]],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = [ln for ln in r.stdout.decode().splitlines()
           if not ln.endswith("is not executable: No such file or directory")]
    t.eq("systemd-analyze verify", out, [])


def test_man(t, root, dirs):
    for key in ("man1dir", "man3dir", "man8dir"):
        mandir = os.path.join(root, dirs[key].lstrip("/"))
        for f in EXPECTED[key]:
            with open(os.path.join(mandir, f)) as fh:
                first = fh.readline()
            if first.startswith(".so "):
                t.eq("%s points at librdn.3" % f, first, ".so man3/librdn.3\n")
                continue
            r = subprocess.run(["groff", "-man", "-ww", "-z",
                                os.path.join(mandir, f)],
                               stderr=subprocess.PIPE)
            t.eq("installed %s renders" % f, (r.returncode, r.stderr), (0, b""))


def test_client(t, root, dirs, work):
    env = dict(os.environ, PKG_CONFIG_SYSROOT_DIR=root,
               PKG_CONFIG_PATH=os.path.join(root,
                                            dirs["pkgconfigdir"].lstrip("/")))
    r = subprocess.run(["pkg-config", "--cflags", "--libs", "librdn"],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    t.eq("pkg-config librdn", (r.returncode, r.stderr), (0, b""))
    flags = r.stdout.decode().split()
    t.check("pkg-config points into the installed tree",
            any(f.startswith("-L" + root) for f in flags), flags)
    prog = os.path.join(work, "install_client")
    # Only the installed tree: none of the build's include paths.
    r = subprocess.run([os.environ.get("CC", "cc"), "-Wall", "-Werror",
                        os.path.join(SRC, "t", "install_client.c"), "-o",
                        prog] + flags, stderr=subprocess.PIPE)
    t.eq("t/install_client.c builds against the installed tree",
         (r.returncode, r.stderr.decode()), (0, ""))
    if r.returncode:
        return
    offload_env.Nicd()
    srv, rdn_port = offload_env.start_server(["-m", "16"])
    c = mctest.Client(srv)
    t.eq("set over TCP", c.set(b"installed", b"works"), b"STORED\r\n")
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(
        root, dirs["libdir"].lstrip("/")))
    r = subprocess.run([prog, str(rdn_port), str(srv.port), "installed"],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
    t.eq("the installed librdn reads the key through the NIC",
         (r.returncode, r.stdout, r.stderr), (0, b"works nic\n", b""))
    r = subprocess.run(["ldd", prog], env=env, stdout=subprocess.PIPE)
    t.check("the program runs the installed librdn.so.0",
            re.search(r"librdn\.so\.0 => %s/" % re.escape(root),
                      r.stdout.decode()), r.stdout)


def test_autostart(t, root, dirs, work):
    """The installed server, starting rdn-nicd on demand, never starts the
    build tree's: here the installed one is found on PATH (or the one
    installed at the configured sbindir, if this host has one)."""
    sock = os.path.join(work, "autostart.sock")
    env = dict(os.environ, RDN_NICD_SOCKET=sock, RDN_NICD_AUTOSTART="1",
               RDN_NICD_IDLE_EXIT="30", RDN_DEVICE="softnic",
               PATH=os.path.join(root, dirs["sbindir"].lstrip("/")) + ":" +
               os.environ.get("PATH", "/usr/bin:/bin"))
    env.pop("RDN_NICD", None)
    server = os.path.join(root, dirs["bindir"].lstrip("/"), "redn-memcached")
    srv = subprocess.Popen([server, "-p", str(mctest.free_port()),
                            "--rdn-port", str(mctest.free_port()), "-m", "8"]
                           + mctest.root_args(), env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    pid = None
    try:
        deadline = time.time() + 20
        while pid is None and time.time() < deadline and srv.poll() is None:
            try:
                with open(sock + ".pid") as f:
                    pid = int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                time.sleep(0.05)
        if not t.check("the installed server started an rdn-nicd",
                       pid is not None, srv.poll()):
            return
        exe = os.readlink("/proc/%d/exe" % pid)
        print("autostarted: %s" % exe)
        t.check("... not the build tree's",
                not exe.startswith(os.path.abspath(TOP) + "/"), exe)
    finally:
        srv.terminate()
        srv.communicate(timeout=20)
        if pid is not None:
            os.kill(pid, signal.SIGTERM)


def main():
    t = mctest.Tally("install_tree")
    work = tempfile.mkdtemp(prefix="rdn-install-")
    try:
        root = os.path.join(work, "root")
        r = make("install", "DESTDIR=" + root)
        if not t.eq("make install DESTDIR", r.returncode, 0):
            print(r.stderr.decode()[-2000:])
        r = make("install-dirs")
        dirs = dict(ln.split("=", 1) for ln in r.stdout.decode().splitlines())
        t.run(test_files, root, dirs)
        t.run(test_units, root, dirs)
        t.run(test_man, root, dirs)
        t.run(test_autostart, root, dirs, work)
        t.run(test_client, root, dirs, work)
        r = make("uninstall", "DESTDIR=" + root)
        t.eq("make uninstall", r.returncode, 0)
        t.eq("uninstall leaves no file", sorted(installed_files(root)), [])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
