#!/usr/bin/env python3
"""Mutant sweep: fresh mutants of real files through the real `clipforge` binary (issue 10's target).

Each mutant is written into a fresh folder and given to the binary in a child process under an
address-space limit (default 4 GiB) and a wall-clock timeout (default 30 s). Every run is put in
one class:

  success         exit 0, no panic text
  clean-error     exit 1/2, no panic text, stderr names the input file
  error-no-name   exit 1/2, no panic text, but stderr does not name the input file (a finding)
  panic-shown     panic text on stderr ("panicked at", a backtrace), whatever the exit status
  abort           killed by a signal (SIGABRT of an out-of-memory abort, a stack overflow, SIGSEGV)
  hang            still running at the timeout (killed with its process group)
  temp-left       a `*.cf-tmp-*` file left in the run's folder
  input-modified  the mutant (or a file beside it) changed
  cpu>10s, rss>1GiB  the issue's other target for inputs of at most 1 MB (noted besides the class)

Failure classes are panic-shown, abort, hang, temp-left, input-modified (the script exits 1 when
any occurs) plus, with --strict-limits, cpu>10s and rss>1GiB. The same seed gives the same
mutants. Formats and the command each runs (relative to a fresh run folder):

  acl, bvh, gltf, glb, fbx  import-only:  clipforge convert M -o out/      (--mode compress: compress M -o out)
  cfa                   clipforge decompress M.cfa -o out/m.acl.sjson (reader + full decode); the
                        sources are made first by compressing small real clips; half of the
                        mutants get their size field and CRC-32 recomputed so they reach the checks
                        behind the checksum.

Kinds beyond mutated files (issue 27), each a "format" of --formats:

  fbxbomb     a real binary FBX (<= 1 MB) whose array node (KeyTime, KeyValueFloat, ...) is
              replaced by a zlib stream of zeros inflating to 64-990 MiB (scripts/fbx_bomb.py):
              compress M -o out; besides the classes above, `rss-over-budget` (peak RSS above
              320 MB: the per-input budget of a <= 1 MB file is 256 MiB) is a failure. A bomb
              within the budget is inflated and may then fail as malformed (clean-error).
  outpath     a real .acl.sjson given output paths that must never replace anything: -o the
              input itself, -o ./ beside it, -o a symlink to it, -o /dev/null, -o -, --json the
              input, -o under a missing folder. Extra failures: `path-replaced` (the symlink is no
              longer one), `path-created` (the missing folder appeared).
  slowwriter  `watch in -o out` while a real clip (<= 1 MB) is written in 3-8 pieces with pauses
              below the settle time (50-290 ms): `failed-while-writing` (a FAILED line for it) and
              `not-compressed` / `compressed-twice` are failures. Slow: ~4 s a run.

Example (the integrator's re-run after the merge; one format at a time, niced):
  CARGO_TARGET_DIR=... cargo build --release --no-default-features --bin clipforge
  nice -n 10 scripts/mutants.py -n 10000 --formats acl,bvh,gltf,glb,fbx,cfa --json mutants.json
"""

import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import random
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import fbx_bomb  # noqa: E402  (beside this script)
FAILURES = ("panic-shown", "abort", "hang", "temp-left", "input-modified", "path-replaced",
            "path-created", "rss-over-budget", "failed-while-writing", "not-compressed",
            "compressed-twice")
# The per-input budget of a file <= 1 MB is at most 256 MiB; the process's own ~15 MB and the
# input on top.
BOMB_RSS_MB = 320
OUTPATH_CASES = [
    ["convert", "{m}", "-o", "{m}"],
    ["convert", "{m}", "-o", "./"],
    ["convert", "{m}", "-o", "link.acl.sjson"],
    ["convert", "{m}", "-o", "/dev/null"],
    ["convert", "{m}", "-o", "-"],
    ["compress", "{m}", "-o", ".", "--json", "{m}"],
    ["convert", "{m}", "-o", "missing/dir/x.acl.sjson"],
]
PANIC_RE = re.compile(rb"panicked at|stack backtrace:|RUST_BACKTRACE|thread '[^']*' has overflowed")
NUM_RE = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
INTERESTING_NUMBERS = [
    b"0", b"-1", b"1", b"-0", b"1e30", b"-1e30", b"1e300", b"nan", b"inf", b"-inf", b"49999999",
    b"2000000000", b"4294967296", b"99999999999999999999", b"1e-45", b"0.0000001", b"65535",
    b"65536", b"1600000", b"3.4028236e38", b"-2147483649",
]
INTERESTING_STRINGS = [
    "", "../../../../etc/passwd", "/dev/zero", "/dev/stdin", "file:///etc/passwd", "..",
    "data:application/octet-stream;base64,AAAA", "data:,", "x" * 300, "rotation", "weights",
    "scale", "translation", "CUBICSPLINE", "STEP", "\u00e9\u0000",
]


def sources(fmt, data, max_kb):
    pats = {
        "acl": ("acl-regression", "*.acl.sjson"),
        "bvh": ("bvh", "*.bvh"),
        "gltf": ("gltf", "*.gltf"),
        "glb": ("gltf", "*.glb"),
        "fbx": ("fbx", "*.fbx"),
    }
    d, pat = pats[fmt]
    out = [p for p in sorted((data / d).rglob(pat)) if p.stat().st_size <= max_kb * 1024]
    return out


def gltf_siblings(path):
    """External buffers/images a .gltf refers to by relative URI (copied beside the mutant)."""
    try:
        doc = json.loads(path.read_bytes())
    except Exception:
        return []
    out = []
    for key in ("buffers", "images"):
        for b in doc.get(key, []) or []:
            uri = b.get("uri") if isinstance(b, dict) else None
            if isinstance(uri, str) and not uri.startswith("data:") and "/" not in uri:
                p = path.parent / uri
                if p.is_file():
                    out.append(p)
    return out


def cfa_fix_up(buf):
    if len(buf) < 16:
        return buf
    buf = bytearray(buf)
    buf[12:16] = struct.pack("<I", len(buf))
    crc = zlib.crc32(bytes(buf[:8]))
    crc = zlib.crc32(bytes(buf[12:]), crc)
    buf[8:12] = struct.pack("<I", crc & 0xFFFFFFFF)
    return bytes(buf)


def mutate_json(data, rng):
    try:
        doc = json.loads(data)
    except Exception:
        return None
    leaves = []

    def walk(node, parent, key):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, node, k)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, node, i)
        else:
            leaves.append((parent, key, node))

    walk(doc, None, None)
    if not leaves:
        return None
    for _ in range(rng.randint(1, 3)):
        parent, key, val = rng.choice(leaves)
        if parent is None:
            break
        r = rng.random()
        if r < 0.15 and isinstance(parent, dict):
            parent.pop(key, None)
        elif isinstance(val, (int, float)) and not isinstance(val, bool):
            parent[key] = rng.choice(
                [0, -1, 1, 2, 1e30, -1e30, 1.6e6, 2**31, 2**32, 65535, 20003, 0.5, val + 1, val * 1000]
            )
        elif isinstance(val, str):
            parent[key] = rng.choice(INTERESTING_STRINGS)
        else:
            parent[key] = rng.choice([None, True, 0, "x", [], {}])
    return json.dumps(doc).encode()


def mutate(data, fmt, rng, others):
    b = bytearray(data)
    # ASCII FBX is text (numbers and lines are worth mutating); binary FBX starts with its magic.
    text = fmt in ("acl", "bvh", "gltf") or (fmt == "fbx" and not data.startswith(b"Kaydara FBX Binary"))
    ops = rng.randint(1, 3)
    for _ in range(ops):
        r = rng.random()
        n = len(b)
        if fmt == "gltf" and r < 0.3:
            m = mutate_json(bytes(b), rng)
            if m is not None:
                b = bytearray(m)
                continue
        if text and r < 0.45:
            nums = list(NUM_RE.finditer(b))
            if nums:
                for m in rng.sample(nums, min(len(nums), rng.randint(1, 3))):
                    if m.end() <= len(b):
                        b[m.start():m.end()] = rng.choice(INTERESTING_NUMBERS)
                continue
        if text and r < 0.55:
            lines = bytes(b).split(b"\n")
            if len(lines) > 1:
                i = rng.randrange(len(lines))
                k = rng.random()
                if k < 0.4:
                    del lines[i]
                elif k < 0.8:
                    lines[i:i] = [lines[i]] * rng.choice([1, 2, 10, 1000])
                else:
                    j = rng.randrange(len(lines))
                    lines[i], lines[j] = lines[j], lines[i]
                b = bytearray(b"\n".join(lines))
                continue
        if n == 0:
            b = bytearray(rng.randbytes(rng.randint(1, 64)))
        elif r < 0.65:
            for _ in range(rng.randint(1, 8)):
                i = rng.randrange(len(b))
                b[i] ^= 1 << rng.randrange(8)
        elif r < 0.72:
            i = rng.randrange(n)
            b[i:i + rng.randint(1, 8)] = rng.randbytes(rng.randint(1, 8))
        elif r < 0.79:
            i = rng.randrange(n)
            del b[i:i + rng.randint(1, max(1, n // 8))]
        elif r < 0.86:
            i, j = rng.randrange(n), rng.randrange(n)
            chunk = b[i:i + rng.randint(1, 256)]
            b[j:j] = chunk * rng.choice([1, 2, 16])
        elif r < 0.92:
            b = b[: rng.randrange(n)]
        elif others:
            o = rng.choice(others)
            b = b[: rng.randrange(n + 1)] + o[rng.randrange(len(o) + 1):]
    if fmt == "cfa" and rng.random() < 0.5:
        return cfa_fix_up(b)
    return bytes(b)


def digest(p):
    return hashlib.sha256(p.read_bytes()).hexdigest()


def run_one(args, binary, fmt, name, payload, siblings, idx):
    d = Path(tempfile.mkdtemp(prefix=f"mut-{fmt}-", dir=args.workdir))
    try:
        m = d / name
        m.write_bytes(payload)
        for s in siblings:
            shutil.copyfile(s, d / s.name)
        (d / "out").mkdir()
        before = {p.name: digest(p) for p in d.iterdir() if p.is_file()}
        if fmt == "outpath":
            os.symlink(name, d / "link.acl.sjson")
            case = OUTPATH_CASES[idx % len(OUTPATH_CASES)]
            cmd = [binary] + [a.replace("{m}", name) for a in case]
        elif fmt == "fbxbomb":
            cmd = [binary, "compress", name, "-o", "out", "--no-skip", "-q"]
        elif fmt == "cfa":
            cmd = [binary, "decompress", name, "-o", "out/m.acl.sjson"]
        elif args.mode == "compress":
            cmd = [binary, "compress", name, "-o", "out", "--no-skip", "-q"]
        else:
            cmd = [binary, "convert", name, "-o", "out/"]
        limit = int(args.as_limit_gib * (1 << 30))

        def pre():
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

        env = dict(os.environ)
        env.pop("RUST_BACKTRACE", None)
        t0 = time.monotonic()
        p = subprocess.Popen(
            cmd, cwd=d, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, preexec_fn=pre, start_new_session=True, env=env,
        )
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(args.timeout, kill)
        timer.start()
        err_chunks = []
        reader = threading.Thread(target=lambda: err_chunks.append(p.stderr.read()))
        reader.start()
        _, status, ru = os.wait4(p.pid, 0)
        timer.cancel()
        reader.join(5)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - t0
        err = b"".join(c for c in err_chunks if c)
        cpu = ru.ru_utime + ru.ru_stime
        rss_mb = ru.ru_maxrss / 1024
        rc = p.returncode
        if timed_out.is_set():
            cls = "hang"
        elif PANIC_RE.search(err):
            cls = "panic-shown"
        elif rc < 0:
            cls = "abort"
        elif rc == 0:
            cls = "success"
        elif name.encode() in err:
            cls = "clean-error"
        else:
            cls = "error-no-name"
        leftovers = [str(q.relative_to(d)) for q in d.rglob("*") if ".cf-tmp-" in q.name]
        if leftovers and cls not in ("hang", "abort"):
            cls = "temp-left"
        after = {n: digest(d / n) for n in before if (d / n).exists()}
        if after != before:
            cls = "input-modified"
        if fmt == "outpath" and cls not in FAILURES:
            if not (d / "link.acl.sjson").is_symlink():
                cls = "path-replaced"
            elif (d / "missing").exists():
                cls = "path-created"
        if fmt == "outpath" and cls == "error-no-name" and any(
                a.encode() in err for a in cmd[2:] if a not in ("-o", "--json")):
            cls = "clean-error"  # the error names the output path it refuses
        if fmt == "fbxbomb" and cls not in FAILURES and rss_mb > BOMB_RSS_MB:
            cls = "rss-over-budget"
        notes = []
        if len(payload) <= 1 << 20:
            if cpu > 10:
                notes.append("cpu>10s")
            if rss_mb > 1024:
                notes.append("rss>1GiB")
        return {
            "format": fmt, "index": idx, "class": cls, "notes": notes, "rc": rc,
            "cpu_s": round(cpu, 3), "wall_s": round(wall, 3), "rss_mb": round(rss_mb, 1),
            "size": len(payload), "stderr": err[-2000:].decode("utf-8", "replace"),
            "cmd": " ".join(cmd), "leftovers": leftovers, "payload": payload, "name": name,
        }
    finally:
        shutil.rmtree(d, ignore_errors=True)


def compresses(binary, path, workdir):
    """Whether `compress PATH` succeeds (the file is a valid clip as it stands)."""
    d = Path(tempfile.mkdtemp(prefix="src-check-", dir=workdir))
    try:
        r = subprocess.run([binary, "compress", str(path), "-o", str(d), "-q"],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        return r.returncode == 0
    finally:
        shutil.rmtree(d, ignore_errors=True)


def run_slow_writer(args, binary, fmt, name, payload, siblings, idx, rng_seed):
    """`watch in -o out` while `payload` is written into in/NAME in pieces (pauses < settle)."""
    rng = random.Random(rng_seed)
    d = Path(tempfile.mkdtemp(prefix="mut-slow-", dir=args.workdir))
    try:
        (d / "in").mkdir()
        t0 = time.monotonic()
        p = subprocess.Popen(
            [binary, "watch", "in", "-o", "out"], cwd=d, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )
        time.sleep(1.0)
        pieces = rng.randint(3, 8)
        with open(d / "in" / name, "wb") as f:
            for i in range(pieces):
                f.write(payload[len(payload) * i // pieces: len(payload) * (i + 1) // pieces])
                f.flush()
                if i + 1 < pieces:
                    time.sleep(rng.uniform(0.05, 0.29))
        time.sleep(2.5)
        os.kill(p.pid, signal.SIGINT)
        try:
            out, err = p.communicate(timeout=args.timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            rc = None
        lines = out.decode("utf-8", "replace").splitlines()
        mine = [l for l in lines if name in l]
        compressed = sum(1 for l in mine if l.startswith("compressed"))
        if rc is None:
            cls = "hang"
        elif PANIC_RE.search(err):
            cls = "panic-shown"
        elif any(l.startswith("FAILED") for l in mine):
            cls = "failed-while-writing"
        elif compressed == 0:
            cls = "not-compressed"
        elif compressed > 1:
            cls = "compressed-twice"
        else:
            cls = "success"
        return {
            "format": fmt, "index": idx, "class": cls, "notes": [], "rc": rc, "cpu_s": 0.0,
            "wall_s": round(time.monotonic() - t0, 3), "rss_mb": 0.0, "size": len(payload),
            "stderr": (out + err)[-2000:].decode("utf-8", "replace"),
            "cmd": f"watch in -o out; {name} written in {pieces} pieces", "leftovers": [],
            "payload": payload, "name": name,
        }
    finally:
        shutil.rmtree(d, ignore_errors=True)


def make_cfa_sources(binary, data, workdir, max_kb):
    """Compresses small real clips (each format) into .cfa files to mutate."""
    src = Path(tempfile.mkdtemp(prefix="cfa-src-", dir=workdir))
    picked = []
    for fmt in ("acl", "bvh", "gltf", "glb"):
        picked += [p for p in sources(fmt, data, min(max_kb, 64))][:4]
    for p in picked:
        shutil.copyfile(p, src / p.name)
        if p.suffix == ".gltf":
            for s in gltf_siblings(p):
                shutil.copyfile(s, src / s.name)
    out = src / "out"
    subprocess.run([binary, "compress", str(src), "-o", str(out), "-q"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return sorted(out.rglob("*.cfa"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=10000, help="mutants per format (default 10000)")
    ap.add_argument("--formats", default="acl,bvh,gltf,glb,fbx,cfa")
    ap.add_argument("--mode", choices=("import", "compress"), default="import")
    ap.add_argument("--bin", help="clipforge binary (default $CARGO_TARGET_DIR/release/clipforge)")
    ap.add_argument("--data", default=os.environ.get("CLIPFORGE_DATA", str(ROOT.parent / "shared" / "data")))
    ap.add_argument("--max-source-kb", type=int, default=1024, help="largest source file (issue: 1 MB inputs)")
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--as-limit-gib", type=float, default=4.0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=10)
    ap.add_argument("--max-seconds", type=float, default=0, help="stop a format after this long (0: no limit)")
    ap.add_argument("--keep", help="save every failing mutant (+ .txt with command and stderr) here")
    ap.add_argument("--json", help="write the summary and the failing runs here")
    ap.add_argument("--strict-limits", action="store_true", help="cpu>10s and rss>1GiB also fail")
    args = ap.parse_args()

    binary = args.bin or str(Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release" / "clipforge")
    if not os.access(binary, os.X_OK):
        sys.exit(f"mutants.py: no clipforge binary at {binary} (build it or pass --bin)")
    data = Path(args.data)
    if not data.is_dir():
        sys.exit(f"mutants.py: no real data at {data} (set CLIPFORGE_DATA or --data)")
    binary = str(Path(binary).resolve())
    workdir = Path(tempfile.mkdtemp(prefix="clipforge-mutants-"))
    args.workdir = workdir
    summary, failing = {}, []
    try:
        for fi, fmt in enumerate(args.formats.split(",")):
            if fmt == "cfa":
                srcs = make_cfa_sources(binary, data, workdir, args.max_source_kb)
            elif fmt == "fbxbomb":
                srcs = [p for p in sources("fbx", data, args.max_source_kb)
                        if p.read_bytes()[:18] == b"Kaydara FBX Binary"]
            elif fmt == "outpath":
                srcs = sources("acl", data, args.max_source_kb)
            elif fmt == "slowwriter":
                # Only sources that compress whole: a FAILED line must come from the writing.
                srcs = [p for p in sources("bvh", data, args.max_source_kb)
                        + sources("acl", data, args.max_source_kb)
                        if compresses(binary, p, workdir)]
            else:
                srcs = sources(fmt, data, args.max_source_kb)
            if not srcs:
                print(f"[{fmt}] no source files", file=sys.stderr)
                summary[fmt] = {"error": "no source files"}
                continue
            blobs = [p.read_bytes() for p in srcs]
            sibs = [gltf_siblings(p) if fmt == "gltf" else [] for p in srcs]
            rng = random.Random(args.seed * 1000 + fi)
            counts, notes, t0 = {}, {}, time.monotonic()
            cpu_max = rss_max = 0.0

            streams = {}

            def payload_of(k):
                if fmt in ("outpath", "slowwriter"):
                    return blobs[k]
                if fmt == "fbxbomb":
                    for _ in range(20):
                        node = rng.choice([b"KeyTime", b"KeyValueFloat", b"KeyAttrFlags", b"KeyAttrDataFloat"])
                        try:
                            return fbx_bomb.bomb(blobs[k], rng.choice([64, 256, 512, 990]), node, streams)
                        except ValueError:
                            continue
                    return blobs[k]
                return mutate(blobs[k], fmt, rng, blobs)

            def jobs():
                for i in range(args.n):
                    k = rng.randrange(len(srcs))
                    yield i, srcs[k].name, payload_of(k), sibs[k]

            done = 0
            with cf.ThreadPoolExecutor(max_workers=args.jobs) as ex:
                pending = set()
                it = jobs()
                stop = False
                while True:
                    while not stop and len(pending) < args.jobs * 2:
                        if args.max_seconds and time.monotonic() - t0 > args.max_seconds:
                            stop = True
                            break
                        try:
                            i, name, payload, sib = next(it)
                        except StopIteration:
                            stop = True
                            break
                        if fmt == "slowwriter":
                            pending.add(ex.submit(run_slow_writer, args, binary, fmt, name, payload, sib, i,
                                                  args.seed * 100000 + i))
                        else:
                            pending.add(ex.submit(run_one, args, binary, fmt, name, payload, sib, i))
                    if not pending:
                        break
                    finished, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                    for f in finished:
                        r = f.result()
                        done += 1
                        counts[r["class"]] = counts.get(r["class"], 0) + 1
                        for nt in r["notes"]:
                            notes[nt] = notes.get(nt, 0) + 1
                        cpu_max, rss_max = max(cpu_max, r["cpu_s"]), max(rss_max, r["rss_mb"])
                        bad = r["class"] in FAILURES or (args.strict_limits and r["notes"])
                        if bad or r["class"] == "error-no-name":
                            if args.keep:
                                k = Path(args.keep) / fmt
                                k.mkdir(parents=True, exist_ok=True)
                                base = k / f"{r['class']}-{r['index']:05d}-{r['name']}"
                                base.write_bytes(r["payload"])
                                Path(str(base) + ".txt").write_text(
                                    f"{r['cmd']}\nrc={r['rc']} cpu={r['cpu_s']}s rss={r['rss_mb']}MB\n{r['stderr']}\n")
                            r2 = dict(r)
                            r2.pop("payload")
                            r2["source"] = r2.pop("name")
                            failing.append(r2)
                        if done % 500 == 0:
                            print(f"[{fmt}] {done}/{args.n} {counts} {time.monotonic() - t0:.0f}s", flush=True)
            summary[fmt] = {
                "runs": done, "classes": counts, "limit_notes": notes, "sources": len(srcs),
                "seconds": round(time.monotonic() - t0, 1), "max_cpu_s": cpu_max, "max_rss_mb": rss_max,
            }
            print(f"[{fmt}] {json.dumps(summary[fmt])}", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    bad = sum(
        v.get("classes", {}).get(c, 0) for v in summary.values() for c in FAILURES
    ) + (sum(sum(v.get("limit_notes", {}).values()) for v in summary.values()) if args.strict_limits else 0)
    if args.json:
        by_class = {}
        kept = []
        for r in failing:
            key = (r["format"], r["class"])
            by_class[key] = by_class.get(key, 0) + 1
            if by_class[key] <= 25:
                kept.append(r)
        Path(args.json).write_text(json.dumps({
            "command": " ".join(sys.argv), "binary": binary, "mode": args.mode, "seed": args.seed,
            "timeout_s": args.timeout, "as_limit_gib": args.as_limit_gib, "summary": summary,
            "failing_examples": kept,
        }, indent=1))
    print(f"{'FAIL' if bad else 'OK'}: {bad} failing runs (classes {', '.join(FAILURES)})")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
