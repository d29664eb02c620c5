#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""t/pyclients.py - round trips through Python clients no one here wrote:
pylibmc in binary mode (libmemcached underneath, MEMCACHED_BEHAVIOR_BINARY_
PROTOCOL) and pymemcache (ASCII), against a running server.

Usage: /usr/bin/python3 t/pyclients.py PORT. Runs under Debian's python3,
where python3-pylibmc and python3-pymemcache install. Prints "ok <name>" or
"FAIL <name>: detail" per check (t/conformance.py counts them) and exits 1
if any failed. Not a test by itself.
"""
import sys

failures = 0


def check(name, ok, detail=""):
    global failures
    print("%s %s%s" % ("ok" if ok else "FAIL", name,
                       "" if ok else ": %r" % (detail,)))
    if not ok:
        failures += 1


def raises(fn, exc):
    try:
        fn()
    except exc:
        return True
    return False


def test_pylibmc(port):
    import pylibmc
    c = pylibmc.Client(["127.0.0.1:%d" % port], binary=True,
                       behaviors={"cas": True})
    check("pylibmc set", c.set("a", "b") is True)
    check("pylibmc get", c.get("a") == "b", c.get("a"))
    check("pylibmc get missing", c.get("nope") is None)
    got = c.get_multi(["a", "zz"])
    check("pylibmc get_multi", got == {"a": "b"}, got)
    check("pylibmc set int", c.set("n", 5) is True)
    check("pylibmc incr", c.incr("n", 3) == 8)
    check("pylibmc decr floors at 0", c.decr("n", 10) == 0)
    check("pylibmc delete", c.delete("n") is True)
    check("pylibmc delete missing", c.delete("n") is False)
    check("pylibmc add existing", c.add("a", "x") is False)
    check("pylibmc replace missing",
          raises(lambda: c.replace("zz", "y"), pylibmc.NotFound))
    check("pylibmc append", c.append("a", "!") is True)
    check("pylibmc appended", c.get("a") == "b!", c.get("a"))
    check("pylibmc touch", c.touch("a", 100) is True)
    stats = c.get_stats()
    check("pylibmc stats version", stats[0][1].get("version") == b"1.6.18",
          stats)
    v, cas = c.gets("a")
    check("pylibmc gets", v == "b!" and cas > 0, (v, cas))
    check("pylibmc cas match", c.cas("a", "new", cas) is True)
    check("pylibmc cas stale", c.cas("a", "newer", cas) is False)
    check("pylibmc cas stored", c.get("a") == "new", c.get("a"))
    check("pylibmc incr missing",
          raises(lambda: c.incr("zz", 1), pylibmc.NotFound))
    check("pylibmc set_multi", c.set_multi({"m1": 1, "m2": b"two"}) == [])
    got = c.get_multi(["m1", "m2"])
    check("pylibmc get_multi values", got == {"m1": 1, "m2": b"two"}, got)
    check("pylibmc delete_multi", c.delete_multi(["m1", "m2", "m3"]) is False)
    check("pylibmc get after delete_multi", c.get("m1") is None)
    check("pylibmc flush_all", c.flush_all() is True)
    check("pylibmc flushed", c.get("a") is None)


def test_pymemcache(port):
    from pymemcache.client.base import Client
    c = Client(("127.0.0.1", port), connect_timeout=5, timeout=5)
    check("pymemcache set", c.set("x", "y") is True)
    check("pymemcache get", c.get("x") == b"y", c.get("x"))
    check("pymemcache add existing", c.add("x", "z", noreply=False) is False)
    v, cas = c.gets("x")
    check("pymemcache gets", v == b"y" and int(cas) > 0, (v, cas))
    check("pymemcache cas", c.cas("x", "w", cas) is True)
    check("pymemcache cas stale", c.cas("x", "v", cas) is False)
    check("pymemcache set_many", c.set_many({"p": "1", "q": "2"}) == [])
    got = c.get_many(["p", "q", "r"])
    check("pymemcache get_many", got == {"p": b"1", "q": b"2"}, got)
    check("pymemcache incr", c.incr("p", 41) == 42)
    check("pymemcache decr", c.decr("p", 50) == 0)
    check("pymemcache touch", c.touch("x", 100, noreply=False) is True)
    check("pymemcache delete", c.delete("x", noreply=False) is True)
    check("pymemcache delete missing", c.delete("x", noreply=False) is False)
    check("pymemcache stats", c.stats().get(b"version") == b"1.6.18")
    check("pymemcache version", c.version() == b"1.6.18")
    c.close()


def main():
    if len(sys.argv) != 2:
        print("usage: %s PORT" % sys.argv[0], file=sys.stderr)
        sys.exit(2)
    port = int(sys.argv[1])
    for fn in (test_pylibmc, test_pymemcache):
        try:
            fn(port)
        except Exception as e:  # a crash of one client is one failure
            check("%s raised" % fn.__name__, False, repr(e))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
