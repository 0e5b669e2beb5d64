#!/usr/bin/env python3
"""Where the bytes of .cfa files go: per section of the runtime data (docs/FORMAT.md), summed
over every .cfa under the given folders (or files). Reads format versions 1-5, with or without
reference rotations (flags bit 4, and bit 6's 3-byte references); version 4's segment blocks
count as the same parts (its 4-byte bits-per-sample count per block under segment_headers);
version 5's coded metadata (and its 4-byte length) counts as `seg_metadata_coded`.

    scripts/cfa_breakdown.py OUT_DIR [...]        # one table; --per-clip for one row per file
"""
import os
import struct
import sys


def breakdown(buf):
    magic, version, flags = buf[:4], *struct.unpack_from("<HH", buf, 4)
    assert magic == b"CFA1", magic
    assert 1 <= version <= 5, f"format version {version}: this script reads versions 1-5"
    runtime = struct.unpack_from("<I", buf, 16)[0]
    nb, seg_size, ns = struct.unpack_from("<HHI", buf, 20)
    nseg, nconst, nanim, nq = struct.unpack_from("<IIII", buf, 32)
    out = {"header": 48}
    pos = 48
    out["descriptors"] = (nb + 3) // 4 * 4
    pos += out["descriptors"]
    desc = buf[48:48 + nb]
    qtrans = sum(1 for d in desc if (d >> 2) & 3 == 3)
    per_seg_dropped = sum(1 for d in desc if d & 3 == 2 and d >> 6 == 2)
    out["constants"] = 12 * nconst + (24 if qtrans else 0) + 6 * nq
    out["constants"] = (pos + out["constants"] + 3) // 4 * 4 - pos
    pos += out["constants"]
    # Version 3: a rotation's clip range is 12 bytes (16-bit), the section padded to 4.
    anim_rot = sum(1 for d in desc if d & 3 == 2) if version >= 3 else 0
    ranges = 24 * nanim - 12 * anim_rot
    out["clip_ranges"] = (pos + ranges + 3) // 4 * 4 - pos
    pos += out["clip_ranges"]
    out["references"] = 0
    if flags & 16:
        # Section 5b: a bit per animated sub-track (padded to 4), then 4 bytes per set bit.
        nbits = (nanim + 7) // 8
        nref = sum(bin(b).count("1") for b in buf[pos:pos + nbits])
        if flags & 64:
            # Bit 6: 3 bytes per reference right after the bits, the whole padded to 4.
            out["references"] = (pos + nbits + 3 * nref + 3) // 4 * 4 - pos
        else:
            out["references"] = (nbits + 3) // 4 * 4 + 4 * nref
        pos += out["references"]
    meta_per_seg = 2 * nanim + (6 * nanim if nseg > 1 else 0) + per_seg_dropped
    w = r = d = bits = pad = 0
    if version >= 5:
        # Coded metadata (docs/FORMAT.md, "Coded segment metadata"), then the streams.
        length = struct.unpack_from("<I", buf, pos)[0]
        seg_bits = coded_bits_per_sample(buf[pos + 4:pos + 4 + length], nseg, nanim, nseg > 1,
                                         per_seg_dropped)
        coded = (pos + 4 + length + 3) // 4 * 4 - pos
        pos += coded
        for s in range(nseg):
            n = seg_size if s + 1 < nseg else ns - s * seg_size
            nbytes = (seg_bits[s] * n + 7) // 8
            bits += nbytes
            pad += (nbytes + 3) // 4 * 4 - nbytes
            pos += (nbytes + 3) // 4 * 4
        assert pos == runtime - 4, (pos, runtime)
        out.update(segment_headers=0, seg_metadata_coded=coded, seg_widths=0, seg_ranges=0,
                   seg_dropped=0, bitstream=bits, padding=pad + 4)
        out["total"] = runtime
        assert sum(v for k, v in out.items() if k != "total") == runtime, (out, runtime)
        return out
    if version >= 4:
        # Segment blocks (docs/FORMAT.md): bits per sample, widths, grouped ranges, dropped,
        # padding to 4, the bits padded to 4; one after the other up to the 4 tail bytes.
        out["segment_headers"] = 4 * nseg
        for s in range(nseg):
            bps = struct.unpack_from("<I", buf, pos)[0]
            length = seg_size if s + 1 < nseg else ns - s * seg_size
            nbytes = (bps * length + 7) // 8
            data = pos + (4 + meta_per_seg + 3) // 4 * 4
            end = data + (nbytes + 3) // 4 * 4
            pad += data - pos - 4 - meta_per_seg + end - data - nbytes
            pos = end
            bits += nbytes
        assert pos == runtime - 4, (pos, runtime)
    else:
        out["segment_headers"] = 12 * nseg
        hdr = pos
        pos += 12 * nseg
        for s in range(nseg):
            woff, doff, bps = struct.unpack_from("<III", buf, hdr + 12 * s)
            pad += doff - woff - meta_per_seg
            start = s * seg_size
            length = seg_size if s + 1 < nseg else ns - start
            nbytes = (bps * length + 7) // 8
            bits += nbytes
            nxt = struct.unpack_from("<I", buf, hdr + 12 * (s + 1))[0] if s + 1 < nseg else runtime - 4
            pad += nxt - doff - nbytes
    w = 2 * nanim * nseg
    r = 6 * nanim * nseg if nseg > 1 else 0
    d = per_seg_dropped * nseg
    out.update(seg_widths=w, seg_ranges=r, seg_dropped=d, bitstream=bits, padding=pad + 4)
    out["total"] = runtime
    assert sum(v for k, v in out.items() if k != "total") == runtime, (out, runtime)
    return out


def coded_bits_per_sample(coded, nseg, nanim, multi, ndrop):
    """Each segment's bits per sample from version 5's coded metadata."""
    pos = 0

    def bit():
        nonlocal pos
        b = (coded[pos // 8] >> (pos % 8)) & 1
        pos += 1
        return b

    def get(n):
        return sum(bit() << i for i in range(n))

    def golomb():
        zeros = 0
        while bit() == 0:
            zeros += 1
        x = 1
        for _ in range(zeros + 3):
            x = (x << 1) | bit()
        return x

    prev, out = None, []
    for s in range(nseg):
        cur = []
        for a in range(nanim):
            if prev is None:
                v = get(16)
                ws, flag = [(v >> (5 * c)) & 31 for c in range(3)], v >> 15
            else:
                flag = get(1)
                ws = []
                for c in range(3):
                    o = prev[a][0][c]
                    if bit() == 0:
                        ws.append(o)
                    elif bit() == 0:
                        ws.append(o + (-1 if bit() else 1))
                    elif bit() == 0:
                        ws.append(o + (-2 if bit() else 2))
                    else:
                        ws.append(get(5))
            if multi:
                if prev is not None and bit() == 1:
                    for _ in range(6):
                        golomb()
                else:
                    get(48)
            cur.append((ws, flag))
        get(3 * ndrop)
        out.append(sum(sum(ws) + 32 * flag for ws, flag in cur))
        prev = cur
    return out


def main():
    per_clip = "--per-clip" in sys.argv
    paths = [a for a in sys.argv[1:] if not a.startswith("--")]
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".cfa")]
        else:
            files.append(p)
    total = {}
    for f in sorted(files):
        b = breakdown(open(f, "rb").read())
        if per_clip:
            print(os.path.basename(f), b)
        for k, v in b.items():
            total[k] = total.get(k, 0) + v
    t = total.pop("total")
    print(f"{len(files)} files, runtime bytes {t}")
    for k, v in total.items():
        print(f"  {k:16} {v:10} {100 * v / t:6.2f} %")


if __name__ == "__main__":
    main()
