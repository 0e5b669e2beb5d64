#!/usr/bin/env python3
"""Makes an FBX decompression bomb from a real binary FBX (issue 27, item 2).

The first array property of the first node named NAME (default `KeyTime`, an int64 array) is
replaced by a zlib stream of zeros whose declared length inflates to INFLATE_MIB MiB; the file's
node offsets are rewritten so the result is a well-formed binary FBX. The stream itself is about
1/1000 of the inflated size (deflate's best ratio), so 512 MiB makes a ~0.5 MB file.

    python3 scripts/fbx_bomb.py IN.fbx OUT.fbx [--mib 512] [--node KeyTime]

Used by tests/it/pipeline/nothing_lost.rs and scripts/mutants.py; no bomb file is committed.
"""

import argparse
import struct
import zlib

MAGIC = b"Kaydara FBX Binary  \x00"
ARRAY_TYPES = b"fdlib"
ELEM = {ord("f"): 4, ord("d"): 8, ord("l"): 8, ord("i"): 4, ord("b"): 1}


def parse_props(data, pos, count):
    props = []
    for _ in range(count):
        t = data[pos]
        start = pos
        pos += 1
        if t in b"YCIFDL":
            pos += {ord("Y"): 2, ord("C"): 1, ord("I"): 4, ord("F"): 4, ord("D"): 8, ord("L"): 8}[t]
        elif t in ARRAY_TYPES:
            _n, _enc, clen = struct.unpack_from("<III", data, pos)
            pos += 12 + clen
        elif t in b"SR":
            (n,) = struct.unpack_from("<I", data, pos)
            pos += 4 + n
        else:
            raise ValueError(f"unknown property type {chr(t)!r} at {start}")
        props.append(bytes(data[start:pos]))
    return props, pos


def parse_node(data, pos, wide):
    """(node or None for the null record, next position)."""
    fmt, hsize = ("<QQQ", 24) if wide else ("<III", 12)
    end, nprops, _plen = struct.unpack_from(fmt, data, pos)
    name_len = data[pos + hsize]
    if end == 0:
        return None, pos + hsize + 1
    name = bytes(data[pos + hsize + 1 : pos + hsize + 1 + name_len])
    p = pos + hsize + 1 + name_len
    props, p = parse_props(data, p, nprops)
    children = []
    had_null = False
    while p < end:
        child, p = parse_node(data, p, wide)
        if child is None:
            had_null = True
            break
        children.append(child)
    return {"name": name, "props": props, "children": children, "null": had_null}, end


def write_node(out, node, wide):
    fmt, hsize = ("<QQQ", 24) if wide else ("<III", 12)
    start = len(out)
    out += b"\x00" * (hsize + 1)
    out += node["name"]
    plist = b"".join(node["props"])
    out += plist
    for c in node["children"]:
        write_node(out, c, wide)
    if node["children"] or node["null"]:
        out += b"\x00" * (hsize + 1)
    struct.pack_into(fmt, out, start, len(out), len(node["props"]), len(plist))
    out[start + hsize] = len(node["name"])


def zeros_stream(nbytes):
    c = zlib.compressobj(9)
    chunk = bytes(1 << 20)
    parts = []
    left = nbytes
    while left > 0:
        n = min(left, len(chunk))
        parts.append(c.compress(chunk[:n]))
        left -= n
    parts.append(c.flush())
    return b"".join(parts)


def bomb(src, mib, node_name, stream_cache=None):
    data = bytearray(src)
    if not data.startswith(MAGIC):
        raise ValueError("not a binary FBX")
    (version,) = struct.unpack_from("<I", data, 23)
    wide = version >= 7500
    pos = 27
    nodes = []
    while True:
        n, pos = parse_node(data, pos, wide)
        if n is None:
            break
        nodes.append(n)
    footer = bytes(data[pos:])

    def find(ns):
        for n in ns:
            if n["name"] == node_name and n["props"] and n["props"][0][0] in ARRAY_TYPES:
                return n
            f = find(n["children"])
            if f:
                return f
        return None

    target = find(nodes)
    if target is None:
        raise ValueError(f"no array node {node_name!r}")
    t = target["props"][0][0]
    count = (mib << 20) // ELEM[t]
    key = count * ELEM[t]
    if stream_cache is not None and key in stream_cache:
        stream = stream_cache[key]
    else:
        stream = zeros_stream(key)
        if stream_cache is not None:
            stream_cache[key] = stream
    target["props"][0] = bytes([t]) + struct.pack("<III", count, 1, len(stream)) + stream
    out = bytearray(data[:27])
    for n in nodes:
        write_node(out, n, wide)
    out += b"\x00" * ((24 if wide else 12) + 1)
    out += footer
    return bytes(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--mib", type=int, default=512)
    ap.add_argument("--node", default="KeyTime")
    a = ap.parse_args()
    with open(a.src, "rb") as f:
        out = bomb(f.read(), a.mib, a.node.encode())
    with open(a.dst, "wb") as f:
        f.write(out)
    print(f"{a.dst}: {len(out)} bytes, {a.node} inflates to {a.mib} MiB")


if __name__ == "__main__":
    main()
