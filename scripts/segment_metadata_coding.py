#!/usr/bin/env python3
"""Measures, before any format is written, what a `.cfa` would weigh if its segment metadata
(section 6 of docs/FORMAT.md: per segment the bits per sample, the widths, the segment ranges
and the dropped components) were coded against the previous segment instead of stored raw, the
bit streams left exactly as they are (issue 24, item 3). Reads version-4 `.cfa` files (what
`clipforge compress` and `compress_cpu --out` write) and prints, per set, today's runtime bytes
and the bytes of that coding, so the sizes against ACL follow with the same baselines.

The coding measured (every count exact, paddings included; nothing approximated):
- the 4-byte bits-per-sample count of each block is dropped (the widths give it);
- segment 0 stores its metadata raw (16-bit widths, six 8-bit range bytes, a 3-bit dropped
  component per per-segment rotation);
- every later segment, per animated sub-track: per component its width's change from the same
  component in the previous segment (0: '0', +-1: '10'+sign, +-2: '110'+sign, else '111' + 5 bits),
  bit 15 raw (1 bit); then a flag bit and the six range bytes either raw (48 bits) or as
  zigzagged differences from the previous segment's, exp-Golomb order 3, whichever is shorter;
- the dropped components raw (3 bits each);
- the coded metadata of all segments in one bit stream, padded to 4 bytes, then every segment's
  bits padded to 4 as in version 4.
The coded metadata cannot be read at a segment without the ones before it: a reader would expand
it once, at construction, into the layout version 4 keeps in the buffer (RAM for file bytes:
printed too).

    scripts/segment_metadata_coding.py DIR_OF_V4_CFA [...]
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cfa_breakdown import breakdown  # noqa: E402


def blocks(buf):
    """(num_animated, multi, per segment: (widths, ranges per track, dropped, bit bytes))."""
    version = struct.unpack_from("<H", buf, 4)[0]
    assert version == 4, f"version {version}: this script reads version 4"
    nb, seg_size, ns = struct.unpack_from("<HHI", buf, 20)
    nseg, _, nanim, _ = struct.unpack_from("<IIII", buf, 32)
    b = breakdown(buf)
    pos = sum(b[k] for k in ("header", "descriptors", "constants", "clip_ranges", "references"))
    desc = buf[48:48 + nb]
    ndrop = sum(1 for d in desc if d & 3 == 2 and d >> 6 == 2)
    multi = nseg > 1
    meta = 2 * nanim + (6 * nanim if multi else 0) + ndrop
    out = []
    for s in range(nseg):
        bps = struct.unpack_from("<I", buf, pos)[0]
        ws = [struct.unpack_from("<H", buf, pos + 4 + 2 * a)[0] for a in range(nanim)]
        rng = []
        r0 = pos + 4 + 2 * nanim
        if multi:
            for g in range(0, nanim, 4):
                lanes = min(4, nanim - g)
                rows = [buf[r0 + row * lanes:r0 + (row + 1) * lanes] for row in range(6)]
                r0 += 6 * lanes
                rng += [tuple(rows[row][j] for row in range(6)) for j in range(lanes)]
        drop = list(buf[pos + 4 + 2 * nanim + (6 * nanim if multi else 0):][:ndrop])
        length = seg_size if s + 1 < nseg else ns - s * seg_size
        nbytes = (bps * length + 7) // 8
        data = pos + (4 + meta + 3) // 4 * 4
        pos = data + (nbytes + 3) // 4 * 4
        out.append((ws, rng, drop, (nbytes + 3) // 4 * 4))
    return nanim, multi, ndrop, out, b


def exp_golomb(v, k):
    v += 1 << k
    return 2 * v.bit_length() - 1 - k


def zigzag(d):
    return 2 * d if d >= 0 else -2 * d - 1


def width_change(d):
    return {0: 1, 1: 3, -1: 3, 2: 5, -2: 5}.get(d, 8)


def coded_bits(nanim, multi, ndrop, segs):
    bits = 0
    for s, (ws, rng, drop, _) in enumerate(segs):
        if s == 0:
            bits += nanim * (16 + (48 if multi else 0)) + 3 * ndrop
            continue
        pws, prng = segs[s - 1][0], segs[s - 1][1]
        for a, w in enumerate(ws):
            bits += 1 + sum(width_change(((w >> 5 * c) & 31) - ((pws[a] >> 5 * c) & 31)) for c in range(3))
            if multi:
                delta = sum(exp_golomb(zigzag(rng[a][c] - prng[a][c]), 3) for c in range(6))
                bits += 1 + min(48, delta)
        bits += 3 * ndrop
    return bits


def main():
    dirs = [a for a in sys.argv[1:] if not a.startswith("-")]
    if not dirs:
        sys.exit(__doc__)
    for d in dirs:
        files = sorted(os.path.join(r, n) for r, _, ns in os.walk(d) for n in ns if n.endswith(".cfa"))
        today = coded = meta_raw = 0
        for f in files:
            buf = open(f, "rb").read()
            nanim, multi, ndrop, segs, b = blocks(buf)
            today += b["total"]
            seg6 = sum(b[k] for k in ("segment_headers", "seg_widths", "seg_ranges", "seg_dropped",
                                      "bitstream"))
            # Version 4's section 6 with its paddings: everything after the references but the tail.
            v4_section = b["total"] - 4 - sum(b[k] for k in ("header", "descriptors", "constants",
                                                               "clip_ranges", "references"))
            assert v4_section >= seg6
            v5_section = (coded_bits(nanim, multi, ndrop, segs) + 31) // 32 * 4 + sum(x[3] for x in segs)
            coded += b["total"] - v4_section + v5_section
            meta_raw += sum(2 * nanim + (6 * nanim if multi else 0) + ndrop for _ in segs)
        print(f"{d}: {len(files)} files, runtime bytes today {today}, coded {coded} "
              f"({100 * (coded - today) / today:+.2f} %); metadata a reader would expand: {meta_raw} B "
              f"({100 * meta_raw / today:.1f} % of today's bytes)")


if __name__ == "__main__":
    main()
