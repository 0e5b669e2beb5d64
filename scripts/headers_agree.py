#!/usr/bin/env python3
"""Compiler agreement for `clipforge headers --mode preprocessed`: generate one translation unit
per public header of a real header tree nobody here wrote, compute the truth with `g++ -M -MG`
(like ../shared/tools/headers/gt.py, but keeping system headers, since the tree *is* system
headers), run our scanner with --count-system, compare per-TU closures and Total Parsed.

Usage: scripts/headers_agree.py --kind cxx|c|boost [--limit N] [--std c++20] [--jobs 2]
                                [--bin target/release/clipforge] [--keep DIR] [--min-identical 98]
Exit status 1 if fewer than --min-identical % TUs are identical or Total Parsed differs by > 2%.
"""
import argparse, json, os, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor

ap = argparse.ArgumentParser()
ap.add_argument('--kind', required=True, choices=['cxx', 'c', 'boost'])
ap.add_argument('--limit', type=int, default=0)
ap.add_argument('--std', default='c++20')
ap.add_argument('--jobs', type=int, default=2)
ap.add_argument('--bin', default=os.environ.get('CLIPFORGE_BIN', 'clipforge'))
ap.add_argument('--keep')
ap.add_argument('--min-identical', type=float, default=98.0)
ap.add_argument('--max-parsed-delta', type=float, default=2.0)
a = ap.parse_args()

def headers():
    if a.kind == 'cxx':
        d = '/usr/include/c++/12'
        hs = sorted(f for f in os.listdir(d) if os.path.isfile(os.path.join(d, f)) and '.' not in f)
    elif a.kind == 'c':
        d = '/usr/include'
        hs = sorted(f for f in os.listdir(d) if f.endswith('.h') and os.path.isfile(os.path.join(d, f)))
    else:
        d = '/usr/include/boost'
        hs = sorted('boost/' + f for f in os.listdir(d) if f.endswith('.hpp'))
    return hs[:a.limit] if a.limit else hs

root = os.path.realpath(a.keep) if a.keep else tempfile.mkdtemp(prefix='cf-agree-')
os.makedirs(root, exist_ok=True)
ext = '.c' if a.kind == 'c' else '.cpp'
tus = []
for h in headers():
    name = 'tu_' + h.replace('/', '_').replace('.', '_') + ext
    with open(os.path.join(root, name), 'w') as f:
        f.write(f'#include <{h}>\n')
    tus.append(name)

def gxx(tu):
    cmd = (['gcc'] if tu.endswith('.c') else ['g++', f'-std={a.std}']) + ['-M', '-MG', tu]
    r = subprocess.run(cmd, cwd=root, capture_output=True, text=True, errors='replace')
    body = r.stdout.replace('\\\n', ' ')
    body = body[body.find(': ') + 2:] if ': ' in body else ''
    deps = set()
    for tok in body.split():
        p = os.path.normpath(os.path.join(root, tok))
        if os.path.exists(p):
            deps.add(p)
    deps.add(os.path.normpath(os.path.join(root, tu)))
    return tu, deps, r.returncode

t0 = time.time()
with ThreadPoolExecutor(a.jobs) as ex:
    truth = {os.path.join(root, tu): deps for tu, deps, rc in ex.map(gxx, tus)}
gxx_s = time.time() - t0

out = os.path.join(root, '_ours.json')
cmd = [a.bin, 'headers', root, '--count-system', '--no-cache', '-q', '--closures', out, '--std', a.std]
t0 = time.time()
r = subprocess.run(cmd, capture_output=True, text=True)
ours_s = time.time() - t0
if r.returncode != 0:
    print(r.stdout, r.stderr)
    sys.exit(2)
ours = {k: set(v) for k, v in json.load(open(out)).items()}

lines_cache = {}
def nlines(p):
    if p not in lines_cache:
        with open(p, 'rb') as f:
            lines_cache[p] = len(f.read().splitlines())
    return lines_cache[p]

ident = 0
tp_g = tp_o = 0
diffs = []
for tu, g in sorted(truth.items()):
    o = ours.get(tu, set())
    tp_g += sum(nlines(p) for p in g)
    tp_o += sum(nlines(p) for p in o)
    if o == g:
        ident += 1
    else:
        diffs.append((tu, sorted(o - g)[:5], sorted(g - o)[:5]))
n = len(truth)
pct = 100.0 * ident / n if n else 0
delta = 100.0 * (tp_o - tp_g) / tp_g if tp_g else 0
res = {'kind': a.kind, 'tus': n, 'identical': ident, 'identical_pct': round(pct, 2),
       'total_parsed_gxx': tp_g, 'total_parsed_ours': tp_o, 'total_parsed_delta_pct': round(delta, 3),
       'gxx_M_seconds': round(gxx_s, 2), 'ours_seconds': round(ours_s, 3), 'root': root}
print(json.dumps(res, indent=1))
for tu, extra, miss in diffs[:15]:
    print('DIFF', os.path.basename(tu), 'only ours:', extra, 'only g++:', miss)
ok = pct >= a.min_identical and abs(delta) <= a.max_parsed_delta
sys.exit(0 if ok else 1)
