#!/usr/bin/env python3
"""Module import graph and lines per module of the fedtopo crate.

Usage: scripts/module-graph.py [--tests] [--edges] [--check] [SRC_DIR]

`--check` exits 1 when an import runs upward or modules or files form a
cycle (run by .ci/run).

Reads every `.rs` file under SRC_DIR (default: src next to this script) as
text and collects its imports of other crate modules:

* `use crate::...;` (with nested `{...}` groups), `use super::...;`,
  `use self::...;`, and in the binary (`src/main.rs`, `src/cli/`) also
  `use fedtopo::...;`;
* inline paths `crate::a::b`, `super::x`, `fedtopo::a` anywhere in code
  (comments and string literals are skipped).

Each import is resolved to the file that defines the longest matching module
prefix (`src/a/b.rs` or `src/a/b/mod.rs`); re-exports are not followed, so an
item re-exported by `overlay/mod.rs` counts as an import of `overlay/mod.rs`.

Printed (Markdown):

1. module level: for each top-level module (`src/X.rs` or `src/X/`), the
   modules it imports; then every import that runs *upward* in the target
   layering (FLOORS below) and every cycle (strongly connected component);
2. file level: every cycle between files (strongly connected components of
   the file graph; `a/mod.rs` importing its own submodules is a parent edge
   and does not count, nor does a child using `super::` items of its parent);
3. lines per top-level module (all lines of its `.rs` files, then the lines
   outside test code).

Test code (files named `tests.rs`, `*_tests.rs`, under a `tests/` folder,
and inline `#[cfg(test)] mod ... { }` blocks) is left out of the graph
unless `--tests` is given. `--edges` also lists each module-level edge with
one example file:line.
"""

import os
import re
import sys
from collections import defaultdict

# Target layering (docs/architecture.md "Layout", bottom up). Lower floors never import from higher ones;
# imports within one floor are allowed but must not form cycles.
# A wing (a folder grouping several rooms, e.g. `net/`) counts its
# submodules as rooms of their own: `net::underlay`, `net::delay`, ...
WINGS = ["net"]
FLOORS = [
    ["units", "engine", "maxplus", "cite", "csv_file", "input_file", "progress"],
    ["net::underlay", "net::builtin"],
    ["net::access", "net::placement", "net::silos", "net::links"],
    ["net::connectivity"],
    ["net::workload", "net::dynamics"],
    ["net::delay", "net::scenario", "net::description"],
    ["network"],
    ["graph"],
    ["timing", "mixing"],
    ["overlay"],
    ["replay"],
    ["calibrate"],
    ["evaluate"],
    ["train"],
    ["program"],
    ["design"],
    ["experiment", "report", "reproduce"],
    ["cli"],
    ["main"],
]
FLOOR = {m: i for i, ms in enumerate(FLOORS) for m in ms}


def strip_comments_and_strings(text):
    """Blank out comments, string and char literals (keeping newlines)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            # char literal ('a', '\n', '\u{..}') vs lifetime ('a)
            m = re.match(r"'(\\.[^']*|[^\\'])'", text[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def test_mask(code):
    """Per line: True when the line is inside an inline #[cfg(test)] module."""
    lines = code.split("\n")
    mask = [False] * len(lines)
    i = 0
    while i < len(lines):
        if re.match(r"\s*#\[cfg\(test\)\]", lines[i]):
            j = i + 1
            while j < len(lines) and re.match(r"\s*(#\[|$)", lines[j]):
                j += 1
            if j < len(lines) and re.match(r"\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", lines[j]):
                depth, k = 0, j
                while k < len(lines):
                    depth += lines[k].count("{") - lines[k].count("}")
                    mask[k] = True
                    if depth <= 0 and k > j or (depth == 0 and "}" in lines[k]):
                        break
                    k += 1
                for t in range(i, k + 1):
                    mask[t] = True
                i = k + 1
                continue
        i += 1
    return mask


def expand_use_tree(tree):
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e'] (no spaces)."""
    tree = re.sub(r"\s+", "", tree)
    m = re.search(r"\{", tree)
    if not m:
        return [tree]
    prefix = tree[: m.start()]
    body = tree[m.start() + 1: tree.rfind("}")]
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    res = []
    for p in parts:
        if p:
            res.extend(prefix + q for q in expand_use_tree(p))
    return res


class Crate:
    def __init__(self, src):
        self.src = src
        self.files = {}  # rel path -> text
        for root, _, names in os.walk(src):
            for name in names:
                if name.endswith(".rs"):
                    p = os.path.join(root, name)
                    self.files[os.path.relpath(p, src)] = open(p, encoding="utf-8").read()

    def module_path(self, rel):
        """Module path segments of a file: 'overlay/mod.rs' -> ['overlay']."""
        parts = rel[:-3].split("/")
        if parts[-1] == "mod":
            parts = parts[:-1]
        if parts in (["lib"], ["main"]):
            return []
        return parts

    def file_of(self, segs):
        """Longest module prefix of segs that is a file; returns rel path or None."""
        for k in range(len(segs), 0, -1):
            base = "/".join(segs[:k])
            for cand in (base + ".rs", base + "/mod.rs"):
                if cand in self.files:
                    return cand
        return None

    def is_test_file(self, rel):
        base = os.path.basename(rel)
        return base == "tests.rs" or base.endswith("_tests.rs") or "/tests/" in "/" + rel

    def is_bin(self, rel):
        return rel == "main.rs" or rel.startswith("cli/")

    def imports(self, rel, with_tests):
        """[(line, target segments)] of one file."""
        code = strip_comments_and_strings(self.files[rel])
        mask = test_mask(code)
        here = self.module_path(rel)
        is_mod_file = rel.endswith("mod.rs") or rel in ("lib.rs", "main.rs")
        # module of the file itself, as `self::` / `super::` resolve in it
        self_mod = here
        out = []
        bin_ = self.is_bin(rel)

        def resolve(path):
            segs = [s for s in path.split("::") if s]
            if not segs:
                return None
            head = segs[0]
            if head == "crate":
                rest = segs[1:]
                if bin_ and rest[:1] != ["cli"]:
                    return None  # only `crate::cli` exists in the binary
                return rest
            if head == "fedtopo" and bin_:
                return segs[1:]
            if head == "self":
                return self_mod + segs[1:]
            if head == "super":
                cur = list(self_mod)
                while segs and segs[0] == "super":
                    cur = cur[:-1]
                    segs = segs[1:]
                return cur + segs
            return None

        lines = code.split("\n")
        starts = [0]
        for ln in lines:
            starts.append(starts[-1] + len(ln) + 1)

        def line_of(pos):
            lo, hi = 0, len(starts) - 1
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if starts[mid] <= pos:
                    lo = mid
                else:
                    hi = mid - 1
            return lo

        used_spans = []
        for m in re.finditer(r"\buse\s+((?:crate|super|self|fedtopo)\s*::[^;]*);", code):
            used_spans.append((m.start(), m.end()))
            ln = line_of(m.start())
            if mask[ln] and not with_tests:
                continue
            for p in expand_use_tree(m.group(1)):
                t = resolve(p)
                if t is not None:
                    out.append((ln + 1, t))
        for m in re.finditer(r"(?<![\w:])((?:crate|fedtopo|super)(?:\s*::\s*\w+)+)", code):
            if any(a <= m.start() < b for a, b in used_spans):
                continue
            ln = line_of(m.start())
            if mask[ln] and not with_tests:
                continue
            if m.group(1).startswith("fedtopo") and not bin_:
                continue
            t = resolve(m.group(1))
            if t is not None:
                out.append((ln + 1, t))
        return out

    def top(self, rel):
        if rel == "main.rs":
            return "main"
        if rel == "lib.rs":
            return "lib"
        parts = self.module_path(rel)
        if parts[0] in WINGS:
            # the wing's own mod.rs only names its rooms, like lib.rs
            return "lib" if len(parts) == 1 else f"{parts[0]}::{parts[1]}"
        return parts[0]


def sccs(nodes, edges):
    """Tarjan's strongly connected components with more than one node."""
    index, low, onstack, stack, res = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        onstack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in onstack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                onstack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                res.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return sorted(res)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    with_tests = "--tests" in sys.argv
    show_edges = "--edges" in sys.argv
    src = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    crate = Crate(src)

    mod_edges = defaultdict(lambda: defaultdict(list))  # a -> b -> [file:line]
    file_edges = defaultdict(set)
    file_where = {}
    for rel in sorted(crate.files):
        if crate.is_test_file(rel) and not with_tests:
            continue
        a = crate.top(rel)
        here = crate.module_path(rel)
        for ln, segs in crate.imports(rel, with_tests):
            f = crate.file_of(segs)
            if f is None:
                continue
            b = crate.top(f)
            if a != b and a != "lib":
                if f"{rel}:{ln}" not in mod_edges[a][b]:
                    mod_edges[a][b].append(f"{rel}:{ln}")
            if f != rel:
                there = crate.module_path(f)
                # parent mod.rs naming its child, or child using its ancestors'
                # items: structure, not a dependency between peers
                if there[: len(here)] == here and rel.endswith(("mod.rs", "lib.rs", "main.rs")):
                    continue
                if here[: len(there)] == there and f.endswith(("mod.rs", "lib.rs")):
                    continue
                file_edges[rel].add(f)
                file_where.setdefault((rel, f), f"{rel}:{ln}")

    print("# Module graph of src/" + (" (tests included)" if with_tests else " (test code left out)"))
    print()
    print("## Module level: imports per top-level module")
    print()
    mods = sorted({crate.top(r) for r in crate.files} - {"lib"}, key=lambda m: (FLOOR.get(m, 99), m))
    for a in mods:
        tgt = sorted(mod_edges[a], key=lambda m: (FLOOR.get(m, 99), m))
        print(f"- {a} (floor {FLOOR.get(a, '?')}): {', '.join(tgt) if tgt else '-'}")
        if show_edges:
            for b in tgt:
                print(f"    - {b}: {len(mod_edges[a][b])} uses, e.g. {mod_edges[a][b][0]}")
    print()
    print("## Module level: upward imports (lower floor imports a higher one)")
    print()
    up = []
    for a in mods:
        for b, where in mod_edges[a].items():
            fa, fb = FLOOR.get(a), FLOOR.get(b)
            if fa is None or fb is None or fb > fa:
                up.append((a, b, where))
    if not up:
        print("none")
    for a, b, where in sorted(up, key=lambda t: (FLOOR.get(t[0], 99), t[0], t[1])):
        print(f"- {a} -> {b} ({len(where)} uses: {', '.join(where[:4])}{', ...' if len(where) > 4 else ''})")
    print()
    print("## Module level: cycles")
    print()
    mc = sccs(mods, {a: set(bs) for a, bs in mod_edges.items()})
    if not mc:
        print("none")
    for comp in mc:
        print("- " + " <-> ".join(comp))
    print()
    print("## File level: cycles (strongly connected components)")
    print()
    fc = sccs(crate.files.keys(), file_edges)
    if not fc:
        print("none")
    for comp in fc:
        inside = sorted((a, b) for a in comp for b in file_edges.get(a, ()) if b in comp)
        print(f"- {' <-> '.join(comp)}")
        for a, b in inside:
            print(f"    - {a} -> {b} ({file_where[(a, b)]})")
    print()
    print("## Lines per top-level module")
    print()
    print("| module | files | lines | non-test lines |")
    print("|---|---:|---:|---:|")
    tot = [0, 0, 0]
    for m in sorted({crate.top(r) for r in crate.files}, key=lambda m: (FLOOR.get(m, -1 if m == "lib" else 99), m)):
        rels = [r for r in crate.files if crate.top(r) == m]
        n = sum(crate.files[r].count("\n") for r in rels)
        nt = 0
        for r in rels:
            if crate.is_test_file(r):
                continue
            mask = test_mask(crate.files[r])
            nt += sum(1 for i, x in enumerate(mask) if not x) - (1 if crate.files[r].endswith("\n") else 0)
        tot[0] += len(rels)
        tot[1] += n
        tot[2] += nt
        print(f"| {m} | {len(rels)} | {n} | {nt} |")
    print(f"| total | {tot[0]} | {tot[1]} | {tot[2]} |")
    if "--check" in sys.argv and (up or mc or fc):
        sys.stderr.write(
            f"module-graph: {len(up)} upward import(s), {len(mc)} module cycle(s), "
            f"{len(fc)} file cycle(s): see above\n"
        )
        sys.exit(1)


if __name__ == "__main__":
    main()
