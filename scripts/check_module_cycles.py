#!/usr/bin/env python3
"""Fails when the files of any crate of the workspace import each other in a cycle.

Each `.rs` file is a module; an edge a -> b is a path `crate::…`, `super::…` or `self::…` in a's
code (comments and string literals removed) that names module b or an item inside it. Test
modules (`#[cfg(test)] mod tests { … }` at the end of a file) are left out: a test may reach
anywhere. Strongly connected components of more than one file are cycles.

Why a script of our own: `cargo modules` needs a nightly-only analysis and a large install; the
question here (which file names which) is answered from the text in a second.

Usage: scripts/check_module_cycles.py [ROOT]   (exit 1 and the cycles printed when there are any)
Cycles known and not yet broken are listed in KNOWN below, each with its issue; a new cycle, or a
known one that grew, fails.
"""

import os
import re
import sys

# Cycles left to break (issue 29, item 4). A cycle equal to one of these is reported but passes.
KNOWN = [
]


def strip(text):
    """Removes comments, string and char literals (roughly, but enough for paths)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'r#*".*?"#*', '""', text, flags=re.S)
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return text


def drop_test_module(text):
    m = re.search(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", text)
    return text[: m.start()] if m else text


def crate_modules(src):
    """Maps module path tuples to files for one crate's src folder."""
    mods = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            full = os.path.join(dirpath, f)
            rel = os.path.relpath(full, src)[:-3].split(os.sep)
            if rel[-1] in ("mod", "lib", "main"):
                rel = rel[:-1]
            mods[tuple(rel)] = full
    return mods


def resolve(mods, path):
    """The longest module prefix of `path` (a tuple of names), or None."""
    for n in range(len(path), -1, -1):
        if tuple(path[:n]) in mods:
            return tuple(path[:n])
    return None


def expand_use_groups(text):
    """`use crate::a::{b, c::d};` -> paths crate::a::b and crate::a::c::d (one level of braces)."""
    out = []
    for m in re.finditer(r"\b(crate|super|self)((?:::\w+)*)::\{([^{}]*)\}", text):
        head = m.group(1) + m.group(2)
        for part in m.group(3).split(","):
            part = part.strip().split(" as ")[0].strip()
            if part and part != "self":
                out.append(head + "::" + part)
            elif part == "self":
                out.append(head)
    return out


def edges_of(mods, me, text):
    text = drop_test_module(strip(text))
    paths = re.findall(r"\b(?:crate|super|self)(?:::\w+)+", text) + expand_use_groups(text)
    targets = set()
    for p in paths:
        parts = p.split("::")
        if parts[0] == "crate":
            base = []
        elif parts[0] == "self":
            base = list(me)
        else:
            base = list(me)
            while parts and parts[0] == "super":
                base = base[:-1]
                parts = parts[1:]
            parts = ["super"] + parts  # keep the shape for slicing below
        names = base + [x for x in parts[1:] if x not in ("super",)]
        t = resolve(mods, names)
        if t is not None and t != me and t != ():
            # A file's own submodules are its children, not a dependency on equal terms.
            if t[: len(me)] == me:
                continue
            targets.add(t)
    return targets


def sccs(nodes, edges):
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    root = os.path.abspath(root)
    srcs = [os.path.join(root, "src")]
    crates = os.path.join(root, "crates")
    srcs += [os.path.join(crates, c, "src") for c in sorted(os.listdir(crates))]
    failed = False
    for src in srcs:
        if not os.path.isdir(src):
            continue
        mods = crate_modules(src)
        edges = {}
        for m, f in mods.items():
            with open(f, encoding="utf-8") as fh:
                edges[m] = edges_of(mods, m, fh.read())
        for comp in sccs(list(mods), edges):
            if len(comp) < 2:
                continue
            files = {os.path.relpath(mods[m], root) for m in comp}
            known = files in KNOWN
            print(
                ("known cycle (issue 29): " if known else "CYCLE: ") + " <-> ".join(sorted(files))
            )
            failed |= not known
    if failed:
        print("module import cycles found (see above); break them, do not add to KNOWN")
        return 1
    print("no new module import cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
