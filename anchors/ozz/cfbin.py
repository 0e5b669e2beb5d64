#!/usr/bin/env python3
"""ClipForge anchor binaries: converters and the reference implementation of the generators.

Python 3 standard library only. The formats and generators are specified in README.md beside
this file; this script and ozz_bench.cc implement them independently, and `hashes` prints the
FNV-1a 64 hashes that ozz_bench prints in its `gen_*` rows, so both can be checked against
each other (scripts/bench_ozz.sh does it before every run).

  cfbin.py acl IN.acl.sjson OUT.cfanim      ACL transform clip -> .cfanim (exit 3: not a transform clip)
  cfbin.py gltf-mesh IN.glb|IN.gltf OUT.cfmesh [--mesh N]
                                            skinned glTF mesh -> .cfmesh (first primitive with JOINTS_0)
  cfbin.py hashes                           hashes of the generated skeleton, poses, palette, mesh, points
  cfbin.py info FILE                        print the header of a .cfanim / .cfmesh
"""
import json
import math
import os
import re
import struct
import sys

# ----------------------------------------------------------------------------------------------
# .cfanim
ANIM_MAGIC = b"CFANIM1\0"
MESH_MAGIC = b"CFMESH1\0"


class NotTransformClip(Exception):
    pass


_TOKEN = re.compile(
    r"""(?P<ws>[ \t\r\n]+|,)
      |(?P<lc>//[^\n]*)
      |(?P<bc>/\*.*?\*/)
      |(?P<str>"(?:[^"\\]|\\.)*")
      |(?P<hex>0[xX][0-9a-fA-F]+)
      |(?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
      |(?P<id>[A-Za-z_][A-Za-z0-9_]*)
      |(?P<p>[{}\[\]=])""",
    re.VERBOSE | re.DOTALL,
)


def _tokens(text):
    pos, n = 0, len(text)
    out = []
    append = out.append
    for m in _TOKEN.finditer(text):
        if m.start() != pos:
            raise ValueError("sjson: unexpected character %r at offset %d" % (text[pos], pos))
        pos = m.end()
        kind = m.lastgroup
        if kind in ("ws", "lc", "bc"):
            continue
        v = m.group(kind)
        if kind == "str":
            append(("s", v[1:-1]))
        elif kind == "num":
            append(("n", float(v)))
        elif kind == "hex":
            append(("n", int(v, 16)))
        elif kind == "id":
            if v == "true":
                append(("n", True))
            elif v == "false":
                append(("n", False))
            else:
                append(("i", v))
        else:
            append(("p", v))
    if pos != n:
        raise ValueError("sjson: unexpected character %r at offset %d" % (text[pos], pos))
    return out


def parse_sjson(text):
    """Simplified JSON (sjson-cpp syntax): implicit top-level object of `key = value`."""
    toks = _tokens(text)
    i = 0

    def value():
        nonlocal i
        kind, v = toks[i]
        if kind == "p" and v == "{":
            i += 1
            obj = {}
            while toks[i] != ("p", "}"):
                k = key()
                obj[k] = value()
            i += 1
            return obj
        if kind == "p" and v == "[":
            i += 1
            arr = []
            while toks[i] != ("p", "]"):
                arr.append(value())
            i += 1
            return arr
        if kind in ("s", "n", "i"):  # a bare identifier value is read as a string
            i += 1
            return v
        raise ValueError("sjson: unexpected token %r" % (v,))

    def key():
        nonlocal i
        kind, v = toks[i]
        if kind not in ("i", "s"):
            raise ValueError("sjson: expected a key, got %r" % (v,))
        if toks[i + 1] != ("p", "="):
            raise ValueError("sjson: expected '=' after %r" % (v,))
        i += 2
        return v

    top = {}
    while i < len(toks):
        k = key()
        top[k] = value()
    return top


def _num(v, binary_exact):
    """A clip-format number: float, or (binary exact) 16 hex digits of the float64 bits."""
    if isinstance(v, str):
        if not binary_exact or len(v) != 16:
            raise ValueError("unexpected string number %r" % v)
        return struct.unpack(">d", bytes.fromhex(v))[0]
    if isinstance(v, bool):
        raise ValueError("unexpected boolean where a number was expected")
    return float(v)


def _vec(v, n, binary_exact, what):
    if not isinstance(v, list) or len(v) != n:
        raise ValueError("%s: expected %d numbers, got %r" % (what, n, v))
    out = [_num(x, binary_exact) for x in v]
    for x in out:
        if not math.isfinite(x):
            raise ValueError("%s: non-finite value" % what)
    return out


def _normq(q, what):
    n = math.sqrt(((q[0] * q[0] + q[1] * q[1]) + q[2] * q[2]) + q[3] * q[3])
    if not n > 0.0:
        raise ValueError("%s: zero-length quaternion" % what)
    return [q[0] / n, q[1] / n, q[2] / n, q[3] / n]


def acl_to_cfanim(src, dst):
    with open(src, "r", encoding="utf-8-sig") as f:
        doc = parse_sjson(f.read())
    if "clip" not in doc:
        raise NotTransformClip("%s: no `clip` section (scalar track list?)" % src)
    clip = doc["clip"]
    bx = bool(clip.get("is_binary_exact", False))
    if clip.get("additive_format", "none") not in ("none", ""):
        raise NotTransformClip("%s: additive clips are not supported" % src)
    S = int(clip["num_samples"])
    rate = float(clip["sample_rate"])
    bones = doc.get("bones", [])
    B = len(bones)
    if B == 0 or S == 0:
        raise NotTransformClip("%s: %d bones, %d samples: nothing to animate" % (src, B, S))
    if not rate > 0:
        raise ValueError("%s: sample_rate must be > 0" % src)
    index = {}
    parents, bind = [], []
    for b, bone in enumerate(bones):
        name = bone["name"]
        if name in index:
            raise ValueError("%s: duplicate bone name %r" % (src, name))
        pname = bone.get("parent", "")
        if pname == "":
            p = -1
        elif pname in index:
            p = index[pname]
        else:
            raise ValueError("%s: bone %r: parent %r is not listed before it" % (src, name, pname))
        index[name] = b
        parents.append(p)
        r = _normq(_vec(bone.get("bind_rotation", [0, 0, 0, 1]), 4, bx, name), name)
        t = _vec(bone.get("bind_translation", [0, 0, 0]), 3, bx, name)
        s = _vec(bone.get("bind_scale", [1, 1, 1]), 3, bx, name)
        bind.append(r + t + s)
    # per bone: list of S rows of 10 values (identity where a sub-track is missing)
    ident_r, ident_t, ident_s = [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]
    rows = [None] * B
    has_scale = False
    for tr in doc.get("tracks", []):
        name = tr["name"]
        if name not in index:
            raise ValueError("%s: track %r has no bone" % (src, name))
        b = index[name]
        rots = tr.get("rotations")
        trans = tr.get("translations")
        scales = tr.get("scales")
        for arr, what in ((rots, "rotations"), (trans, "translations"), (scales, "scales")):
            if arr is not None and len(arr) != S:
                raise ValueError("%s: %s %s: %d rows, expected %d" % (src, name, what, len(arr), S))
        if scales is not None:
            has_scale = True
        bone_rows = []
        for s in range(S):
            r = _normq(_vec(rots[s], 4, bx, name), name) if rots is not None else ident_r
            t = _vec(trans[s], 3, bx, name) if trans is not None else ident_t
            sc = _vec(scales[s], 3, bx, name) if scales is not None else ident_s
            bone_rows.append(r + t + sc)
        rows[b] = bone_rows
    ident_row = ident_r + ident_t + ident_s
    names = b"".join(bone["name"].encode("utf-8") + b"\0" for bone in bones)
    out = bytearray()
    out += ANIM_MAGIC
    out += struct.pack("<IIIfII", 1, B, S, rate, 1 if has_scale else 0, len(names))
    out += struct.pack("<%di" % B, *parents)
    for v in bind:
        out += struct.pack("<10f", *v)
    pack10 = struct.Struct("<10f").pack
    try:
        for s in range(S):
            for b in range(B):
                out += pack10(*(rows[b][s] if rows[b] is not None else ident_row))
    except OverflowError:
        raise ValueError("%s: a value does not fit in float32" % src)
    out += names
    tmp = dst + ".tmp"
    with open(tmp, "wb") as f:
        f.write(out)
    os.replace(tmp, dst)
    return B, S, rate


# ----------------------------------------------------------------------------------------------
# glTF mesh -> .cfmesh
_COMP = {5120: ("b", 1), 5121: ("B", 1), 5122: ("h", 2), 5123: ("H", 2), 5125: ("I", 4), 5126: ("f", 4)}
_NCOMP = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}


def _load_gltf(path):
    import base64
    with open(path, "rb") as f:
        data = f.read()
    bin_chunk = None
    if data[:4] == b"glTF":
        _, _, length = struct.unpack_from("<4sII", data, 0)
        off = 12
        gj = None
        while off < length:
            clen, ctype = struct.unpack_from("<I4s", data, off)
            chunk = data[off + 8: off + 8 + clen]
            if ctype == b"JSON":
                gj = json.loads(chunk)
            elif ctype == b"BIN\0":
                bin_chunk = chunk
            off += 8 + clen
    else:
        gj = json.loads(data)
    buffers = []
    for i, b in enumerate(gj.get("buffers", [])):
        uri = b.get("uri")
        if uri is None:
            buffers.append(bin_chunk)
        elif uri.startswith("data:"):
            buffers.append(base64.b64decode(uri.split(",", 1)[1]))
        else:
            with open(os.path.join(os.path.dirname(path), uri), "rb") as f:
                buffers.append(f.read())
    return gj, buffers


def _accessor(gj, buffers, idx):
    acc = gj["accessors"][idx]
    fmt, size = _COMP[acc["componentType"]]
    nc = _NCOMP[acc["type"]]
    count = acc["count"]
    if "sparse" in acc:
        raise ValueError("sparse accessors are not supported")
    bv = gj["bufferViews"][acc["bufferView"]]
    buf = buffers[bv["buffer"]]
    base = bv.get("byteOffset", 0) + acc.get("byteOffset", 0)
    stride = bv.get("byteStride", 0) or size * nc
    st = struct.Struct("<%d%s" % (nc, fmt))
    rows = [st.unpack_from(buf, base + i * stride) for i in range(count)]
    if acc.get("normalized") and fmt != "f":
        scale = {"B": 255.0, "H": 65535.0, "b": 127.0, "h": 32767.0}[fmt]
        rows = [tuple(max(x / scale, -1.0) for x in r) for r in rows]
    return rows


def gltf_to_cfmesh(src, dst, mesh_index=None):
    gj, buffers = _load_gltf(src)
    prim = None
    for mi, m in enumerate(gj.get("meshes", [])):
        if mesh_index is not None and mi != mesh_index:
            continue
        for p in m["primitives"]:
            a = p["attributes"]
            if "JOINTS_0" in a and "WEIGHTS_0" in a and p.get("mode", 4) == 4:
                prim = p
                break
        if prim:
            break
    if prim is None:
        raise ValueError("%s: no triangle primitive with JOINTS_0 and WEIGHTS_0" % src)
    a = prim["attributes"]
    pos = _accessor(gj, buffers, a["POSITION"])
    joints = _accessor(gj, buffers, a["JOINTS_0"])
    weights = _accessor(gj, buffers, a["WEIGHTS_0"])
    V = len(pos)
    if "indices" in prim:
        idx = [r[0] for r in _accessor(gj, buffers, prim["indices"])]
    else:
        idx = list(range(V))
    if "NORMAL" in a:
        nrm = [tuple(r) for r in _accessor(gj, buffers, a["NORMAL"])]
        normals_note = "NORMAL"
    else:
        # Area-weighted vertex normals: every triangle adds cross(p1 - p0, p2 - p0) (float64, from
        # the float32 positions) to its 3 vertices; then each sum is normalised; a zero sum -> (0,0,1).
        acc = [[0.0, 0.0, 0.0] for _ in range(V)]
        for t in range(0, len(idx) - 2, 3):
            i0, i1, i2 = idx[t], idx[t + 1], idx[t + 2]
            p0, p1, p2 = pos[i0], pos[i1], pos[i2]
            ex, ey, ez = p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]
            fx, fy, fz = p2[0] - p0[0], p2[1] - p0[1], p2[2] - p0[2]
            c = (ey * fz - ez * fy, ez * fx - ex * fz, ex * fy - ey * fx)
            for i in (i0, i1, i2):
                acc[i][0] += c[0]
                acc[i][1] += c[1]
                acc[i][2] += c[2]
        nrm = []
        for x, y, z in acc:
            n = math.sqrt((x * x + y * y) + z * z)
            nrm.append((x / n, y / n, z / n) if n > 0.0 else (0.0, 0.0, 1.0))
        normals_note = "computed (area-weighted face normals)"
    K = 4
    J = len(gj["skins"][0]["joints"]) if gj.get("skins") else (max(max(r) for r in joints) + 1)
    body = bytearray()
    for r in pos:
        body += struct.pack("<3f", *r)
    for r in nrm:
        body += struct.pack("<3f", *r)
    for r in joints:
        body += struct.pack("<4H", *r)
    for r in weights:
        body += struct.pack("<4f", *r)
    out = MESH_MAGIC + struct.pack("<IIIIII", 1, V, K, J, 1, 0) + bytes(body)
    tmp = dst + ".tmp"
    with open(tmp, "wb") as f:
        f.write(out)
    os.replace(tmp, dst)
    return V, J, normals_note, fnv1a64(body)


# ----------------------------------------------------------------------------------------------
# Generators (README.md, "Generators"): SplitMix64, every computation in float64, one rounding
# to float32 at the end.
M64 = (1 << 64) - 1

SEED_SKELETON = 0x5EED0001
SEED_POSES = 0x5EED0002
SEED_PALETTE = 0x5EED0003
SEED_MESH = 0x5EED0004
SEED_POINTS = 0x5EED0005


class SplitMix64:
    def __init__(self, seed):
        self.s = seed & M64

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & M64
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    def unit(self):  # [0, 1), 53 bits
        return (self.next() >> 11) * (1.0 / 9007199254740992.0)

    def sym(self, a):  # [-a, a)
        return (2.0 * self.unit() - 1.0) * a


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & M64
    return h


def gen_skeleton(n=96, p_extend=0.75):
    r = SplitMix64(SEED_SKELETON)
    parents = [-1]
    chain = [0]
    for j in range(1, n):
        u = r.unit()
        if u < p_extend or len(chain) == 1:
            i = len(chain) - 1
        else:
            i = int(r.unit() * (len(chain) - 1))
        parents.append(chain[i])
        chain = chain[: i + 1] + [j]
    return parents


def _quat(r):
    x, y, z, w = r.sym(0.5), r.sym(0.5), r.sym(0.5), 1.0
    n = math.sqrt(((x * x + y * y) + z * z) + w * w)
    return x / n, y / n, z / n, w / n


def gen_poses(chars=1000, joints=96):
    r = SplitMix64(SEED_POSES)
    out = []
    for _ in range(chars * joints):
        q = _quat(r)
        t = (r.sym(10.0), r.sym(10.0), r.sym(10.0))
        out.append(q + t)
    return out


def gen_palette(n=96):
    r = SplitMix64(SEED_PALETTE)
    mats = []
    for _ in range(n):
        x, y, z, w = _quat(r)
        tx, ty, tz = r.sym(1.0), r.sym(1.0), r.sym(1.0)
        xx, yy, zz = x * x, y * y, z * z
        xy, xz, yz = x * y, x * z, y * z
        wx, wy, wz = w * x, w * y, w * z
        mats.append((
            1.0 - 2.0 * (yy + zz), 2.0 * (xy + wz), 2.0 * (xz - wy), 0.0,
            2.0 * (xy - wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz + wx), 0.0,
            2.0 * (xz + wy), 2.0 * (yz - wx), 1.0 - 2.0 * (xx + yy), 0.0,
            tx, ty, tz, 1.0))
    return mats


def gen_mesh(V=50000, J=96, K=4):
    r = SplitMix64(SEED_MESH)
    pos, nrm, idx, wgt = [], [], [], []
    for _ in range(V):
        pos.append((r.sym(100.0), r.sym(100.0), r.sym(100.0)))
        x, y, z = r.sym(1.0), r.sym(1.0), r.sym(1.0)
        n = math.sqrt((x * x + y * y) + z * z)
        nrm.append((x / n, y / n, z / n) if n >= 1e-6 else (0.0, 1.0, 0.0))
        chosen = []
        while len(chosen) < K:
            j = int(r.unit() * J)
            if j not in chosen:
                chosen.append(j)
        idx.append(chosen)
        w = [0.05 + r.unit() for _ in range(K)]
        s = ((w[0] + w[1]) + w[2]) + w[3]
        wgt.append([x / s for x in w])
    return pos, nrm, idx, wgt


def gen_points(n=8192):
    r = SplitMix64(SEED_POINTS)
    pts = [(r.sym(100.0), r.sym(100.0), r.sym(100.0)) for _ in range(n)]
    mat = [r.sym(1.0) for _ in range(16)]
    return pts, mat


def hashes():
    parents = gen_skeleton()
    yield "skeleton96", fnv1a64(struct.pack("<96h", *parents))
    poses = gen_poses()
    yield "poses1000x96", fnv1a64(b"".join(struct.pack("<7f", *p) for p in poses))
    pal = gen_palette()
    yield "palette96", fnv1a64(b"".join(struct.pack("<16f", *m) for m in pal))
    pos, nrm, idx, wgt = gen_mesh()
    body = b"".join(struct.pack("<3f", *p) for p in pos)
    body += b"".join(struct.pack("<3f", *p) for p in nrm)
    body += b"".join(struct.pack("<4H", *p) for p in idx)
    body += b"".join(struct.pack("<4f", *p) for p in wgt)
    yield "mesh50000", fnv1a64(body)
    pts, mat = gen_points()
    yield "points8192", fnv1a64(b"".join(struct.pack("<3f", *p) for p in pts) + struct.pack("<16f", *mat))


def info(path):
    with open(path, "rb") as f:
        head = f.read(32)
    if head[:8] == ANIM_MAGIC:
        ver, B, S, rate, flags, nb = struct.unpack_from("<IIIfII", head, 8)
        print("cfanim v%d: %d bones, %d samples, %g Hz, flags %#x, names %d bytes" % (ver, B, S, rate, flags, nb))
    elif head[:8] == MESH_MAGIC:
        ver, V, K, J, flags, _ = struct.unpack_from("<IIIIII", head, 8)
        print("cfmesh v%d: %d vertices, %d influences, %d joints, flags %#x" % (ver, V, K, J, flags))
    else:
        raise SystemExit("%s: not a .cfanim or .cfmesh file" % path)


def main(argv):
    if len(argv) >= 1 and argv[0] == "acl" and len(argv) == 3:
        try:
            B, S, rate = acl_to_cfanim(argv[1], argv[2])
        except NotTransformClip as e:
            print("skip: %s" % e, file=sys.stderr)
            return 3
        print("%s: %d bones, %d samples, %g Hz" % (argv[2], B, S, rate), file=sys.stderr)
        return 0
    if len(argv) >= 3 and argv[0] == "gltf-mesh":
        mi = None
        if len(argv) == 5 and argv[3] == "--mesh":
            mi = int(argv[4])
        V, J, note, h = gltf_to_cfmesh(argv[1], argv[2], mi)
        print("%s: %d vertices, %d joints, normals %s, body fnv1a64 %016x" % (argv[2], V, J, note, h),
              file=sys.stderr)
        return 0
    if argv == ["hashes"]:
        for name, h in hashes():
            print("%s\t%016x" % (name, h))
        return 0
    if len(argv) == 2 and argv[0] == "info":
        info(argv[1])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
