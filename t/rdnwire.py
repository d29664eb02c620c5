# SPDX-License-Identifier: BSD-3-Clause
"""t/rdnwire.py - the wire constants and structure layouts of the C headers
(proto/rdn_wire.h, proto/table.h, proto/item.h, memcached/persist_int.h's
superblock) for the Python tests, so that no test copies a number by hand.

At import it runs t/wire_dump (a check program built from those headers,
under $top_builddir) and turns what it prints into:

- module attributes named as in C, for every constant: RDN_WIRE_MAGIC,
  RDN_MSG_HELLO, RDN_HASH_NAME, PERSIST_VERSION, ...
- LAYOUTS[name], a Layout per structure (without "struct "): its size,
  each field's offset, and pack() / unpack() built from those offsets.

The handshake's framing (docs/wire.md) is here too: msg() and
read_msg().
"""
import os
import socket
import struct
import subprocess

_TOP = os.environ.get(
    "top_builddir",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
_DUMP = os.path.join(_TOP, "t", "wire_dump")

_INT = {1: "B", 2: "H", 4: "I", 8: "Q"}


class Layout:
    """A C structure: its size and fields (name -> (offset, size, kind,
    count)) in offset order, as t/wire_dump printed them."""

    def __init__(self, name, size):
        self.name, self.size = name, size
        self.fields = {}
        self._fmt = None

    def _add(self, member, off, size, kind, count):
        self.fields[member] = (off, size, kind, count)
        self._fmt = None

    def offset(self, member):
        return self.fields[member][0]

    def _format(self):
        """The struct-module format: integers by kind, byte fields as
        strings, gaps (members no test asked for) as padding."""
        if self._fmt is not None:
            return self._fmt
        order = {kind for _, _, kind, _ in self.fields.values()} - {"s"}
        if len(order) > 1 and "U" in order:
            raise ValueError("%s mixes byte orders" % self.name)
        fmt, at = [">" if "U" in order else "<"], 0
        for off, size, kind, count in self.fields.values():
            if off < at:
                raise ValueError("%s: fields out of order" % self.name)
            if off > at:
                fmt.append("%dx" % (off - at))
            if kind == "s":
                fmt.append("%ds" % size)
            else:
                code = _INT[size // count]
                fmt.append("%d%s" % (count, code.lower() if kind == "i"
                                     else code))
            at = off + size
        if at < self.size:
            fmt.append("%dx" % (self.size - at))
        self._fmt = struct.Struct("".join(fmt))
        if self._fmt.size != self.size:
            raise ValueError("%s: layout is %d bytes, C says %d" %
                             (self.name, self._fmt.size, self.size))
        return self._fmt

    def pack(self, **values):
        """The structure's bytes; fields not given are zero."""
        args = []
        for member, (_, size, kind, count) in self.fields.items():
            v = values.pop(member, b"" if kind == "s" else 0)
            if kind == "s":
                args.append(bytes(v))
            elif count > 1:
                v = list(v) + [0] * (count - len(v))
                args.extend(v)
            else:
                args.append(v)
        if values:
            raise KeyError("%s has no field %s" % (self.name,
                                                   ", ".join(values)))
        return self._format().pack(*args)

    def unpack(self, data):
        """A dict of the fields of data[:size] (integer arrays as lists)."""
        flat = list(self._format().unpack(bytes(data[:self.size])))
        out = {}
        for member, (_, _, kind, count) in self.fields.items():
            n = count if kind != "s" else 1
            v, flat = flat[:n], flat[n:]
            out[member] = v if n > 1 else v[0]
        return out


def _load():
    text = subprocess.run([_DUMP], check=True, stdout=subprocess.PIPE,
                          universal_newlines=True, timeout=30).stdout
    consts, layouts = {}, {}
    for line in text.splitlines():
        w = line.split()
        if w[0] == "const":
            consts[w[1]] = int(w[2])
        elif w[0] == "string":
            consts[w[1]] = w[2]
        elif w[0] == "struct":
            layouts[w[1]] = Layout(w[1], int(w[2]))
        elif w[0] == "field":
            layouts[w[1]]._add(w[2], int(w[3]), int(w[4]), w[5], int(w[6]))
        else:
            raise ValueError("wire_dump: unexpected line %r" % line)
    for lay in layouts.values():
        lay._format()  # every layout must add up to its C size
    return consts, layouts


_CONSTS, LAYOUTS = _load()
globals().update(_CONSTS)

HDR = LAYOUTS["rdn_msg_hdr"]


def msg(mtype, payload=b"", version=None, magic=None, length=None):
    """One handshake message: the header (this version and magic unless
    told otherwise; length defaults to the payload's), then payload."""
    return HDR.pack(magic=RDN_WIRE_MAGIC if magic is None else magic,
                    version=RDN_WIRE_VERSION if version is None else version,
                    type=mtype,
                    len=len(payload) if length is None else length) + payload


def read_msg(sock):
    """(type, payload) of the next message on sock, or None on EOF or
    timeout."""
    def take(n):
        buf = b""
        while len(buf) < n:
            d = sock.recv(n - len(buf))
            if not d:
                return None
            buf += d
        return buf

    try:
        hdr = take(HDR.size)
        if hdr is None:
            return None
        h = HDR.unpack(hdr)
        payload = take(h["len"])
        return None if payload is None else (h["type"], payload)
    except socket.timeout:
        return None


def reject_status(reply):
    """The status (a negative errno) of a REJECT reply, None otherwise."""
    if not reply or reply[0] != RDN_MSG_REJECT:
        return None
    return LAYOUTS["rdn_reject"].unpack(reply[1])["status"]
