#!/usr/bin/env python3
"""File-level dependency analysis of a Rust crate (read-only).

usage: python3 scripts/imports.py [ROOT=the repository] [--facade-edges] [--no-follow]
                               [--max-file=N] [--max-fn=N] [--json=OUT] [--cut=A>B,..]

Graph semantics
* Nodes are files under src/.  src/a/b.rs and src/a/b/mod.rs are module a::b of the
  library crate; src/main.rs is crate `main_bin`; src/bin/<name>/*.rs is crate
  `jail_bin` (for ufo-batch-jail) plus any `#[path = ".."] mod x;` it declares.
* Paths considered: `use` trees (grouped, renamed, `self` in groups) and inline paths
  starting with `crate::`, `$crate::`, `super::`, `self::`, a child module's name, or an
  alias introduced by a `use` that names a module.  A path resolves to the longest
  existing module prefix; then, unless --no-follow, an item re-exported by that module
  (`pub(..) use child::Item`) is followed to the file that defines it (so going through
  a facade mod.rs gives an edge to the real file).
* A `pub(..) use` re-export line is a "facade edge"; it is not counted as a dependency
  (unless --facade-edges, or the re-exported name is also used in the file's own code).
* Everything under a `#[cfg(test)]` / `#[cfg(all(test, ..))]` item is ignored, and a
  file declared by `#[cfg(test)] mod x;` is a test file, left out entirely.
* Comments, strings and char literals are blanked before parsing.
"""
import json
import os
import re
import sys
from collections import defaultdict

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
FLAGS = set(a for a in sys.argv[1:] if a.startswith("--") and "=" not in a)
OPTS = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
ROOT = ARGS[0] if ARGS else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
FOLLOW = "--no-follow" not in FLAGS
FACADE = "--facade-edges" in FLAGS
MAX_FILE = int(OPTS.get("max-file", 450))
MAX_FN = int(OPTS.get("max-fn", 80))
LIB = "crate"


# ---------------------------------------------------------------- lexing
def clean(text):
    """Blank comments, strings and char literals (keep newlines and length)."""
    out = list(text)
    n = len(text)
    i = 0

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif c == "/" and i + 1 < n and text[i + 1] == "*":
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth += 1
                    j += 2
                elif text.startswith("*/", j):
                    depth -= 1
                    j += 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif c in "rb" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'(br|rb|r)(#*)"', text[i:i + 300])
            if m:
                hashes = m.group(2)
                end = text.find('"' + hashes, i + m.end())
                end = n if end < 0 else end + 1 + len(hashes)
                blank(i + m.end(), end - 1 - len(hashes))
                i = end
            elif c == "b" and i + 1 < n and text[i + 1] in "\"'":
                i += 1  # byte string / byte char: handled as normal next round
            else:
                i += 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        elif c == "'":
            if i + 1 < n and text[i + 1] == "\\":
                j = text.find("'", i + 2)
                if text[i + 2:i + 3] == "'":  # '\''
                    j = i + 3
                blank(i + 1, j)
                i = j + 1
            elif i + 2 < n and text[i + 2] == "'":
                blank(i + 1, i + 2)
                i += 3
            else:
                i += 1  # lifetime
        else:
            i += 1
    return "".join(out)


def line_of(starts, pos):
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= pos:
            lo = mid
        else:
            hi = mid - 1
    return lo + 1


def match_brace(s, i):
    """s[i] == '{' (or '('/'['); return index of matching closer."""
    pairs = {"{": "}", "(": ")", "[": "]"}
    op, cl = s[i], pairs[s[i]]
    depth = 0
    for j in range(i, len(s)):
        if s[j] == op:
            depth += 1
        elif s[j] == cl:
            depth -= 1
            if depth == 0:
                return j
    return len(s) - 1


ATTR = re.compile(r"#!?\[")
CFG_TEST = re.compile(r"#\[cfg\(\s*(?:all\(\s*)?test\b")


def skip_attrs_ws(s, i):
    while True:
        while i < len(s) and s[i].isspace():
            i += 1
        if s.startswith("#[", i):
            i = match_brace(s, i + 1) + 1
        else:
            return i


def item_end(s, i):
    """End index (inclusive) of the item starting at i: first ';' or matching '}'."""
    depth = 0
    j = i
    while j < len(s):
        ch = s[j]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == ";" and depth == 0:
            return j
        elif ch == "{" and depth == 0:
            return match_brace(s, j)
        j += 1
    return len(s) - 1


def test_regions(s):
    """[(start, end, is_inline_mod, declared_mod_name_or_None)] for #[cfg(test)] items."""
    regs = []
    for m in CFG_TEST.finditer(s):
        if any(a <= m.start() <= b for a, b, _, _ in regs):
            continue
        attr_end = match_brace(s, m.start() + 1)
        i = skip_attrs_ws(s, attr_end + 1)
        e = item_end(s, i)
        head = s[i:e + 1]
        mm = re.match(r"(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*([;{])", head)
        inline = bool(mm and mm.group(2) == "{")
        decl = mm.group(1) if (mm and mm.group(2) == ";") else None
        regs.append((m.start(), e, inline, decl))
    return regs


# ---------------------------------------------------------------- module map
class File:
    def __init__(self, rel):
        self.rel = rel
        self.mods = []  # [(crate, tuple path)]
        self.raw = open(os.path.join(ROOT, rel), encoding="utf-8").read()
        self.s = clean(self.raw)
        self.starts = [0] + [m.end() for m in re.finditer("\n", self.raw)]
        self.nlines = self.raw.count("\n") + (0 if self.raw.endswith("\n") else 1)
        self.regs = test_regions(self.s)
        # code with test items blanked
        code = list(self.s)
        for a, b, _, _ in self.regs:
            for k in range(a, b + 1):
                if code[k] != "\n":
                    code[k] = " "
        self.code = "".join(code)
        self.test_file = False

    def line(self, pos):
        return line_of(self.starts, pos)

    def mod_test_lines(self):
        n = 0
        for a, b, inline, _ in self.regs:
            if inline:
                n += self.line(b) - self.line(a) + 1
        return n


files = {}
modfile = {}  # (crate, path tuple) -> rel


def add(rel, crate, path):
    f = files.get(rel) or files.setdefault(rel, File(rel))
    f.mods.append((crate, path))
    modfile[(crate, path)] = rel


BIN_DIRS = {}
for dirpath, _, names in os.walk(SRC):
    for nm in names:
        if not nm.endswith(".rs"):
            continue
        rel = os.path.relpath(os.path.join(dirpath, nm), ROOT)
        inner = os.path.relpath(os.path.join(dirpath, nm), SRC)
        parts = inner[:-3].split(os.sep)
        if parts[0] == "bin":
            if len(parts) == 2:  # src/bin/x.rs
                crate = parts[1].replace("ufo-batch-", "").replace("-", "_") + "_bin"
                add(rel, crate, ())
                continue
            crate = parts[1].replace("ufo-batch-", "").replace("-", "_") + "_bin"
            BIN_DIRS[crate] = os.path.join("src", "bin", parts[1])
            parts = parts[2:]
            if parts[-1] in ("main", "mod"):
                parts = parts[:-1]
            add(rel, crate, tuple(parts))
            continue
        if parts == ["lib"]:
            add(rel, LIB, ())
            continue
        if parts == ["main"]:
            add(rel, "main_bin", ())
            continue
        if parts[-1] == "mod":
            parts = parts[:-1]
        add(rel, LIB, tuple(parts))

# #[path] modules
PATH_ATTR = re.compile(r'#\[path\s*=\s*"([^"]+)"\]')
for rel, f in list(files.items()):
    for m in PATH_ATTR.finditer(f.raw):
        after = f.raw[m.end():m.end() + 300]
        mm = re.search(r"\bmod\s+(\w+)\s*;", after)
        if not mm:
            continue
        target = os.path.normpath(os.path.join(os.path.dirname(rel), m.group(1)))
        if target in files:
            for crate, path in list(f.mods):
                base = path if rel.endswith(("main.rs", "mod.rs", "lib.rs")) else path
                add(target, crate, base + (mm.group(1),))

# test-only files: declared by #[cfg(test)] mod x;
for rel, f in files.items():
    for _, _, _, decl in f.regs:
        if decl:
            for crate, path in f.mods:
                t = modfile.get((crate, path + (decl,)))
                if t:
                    files[t].test_file = True
# propagate to children of test files
changed = True
while changed:
    changed = False
    for (crate, path), rel in modfile.items():
        if path and not files[rel].test_file:
            p = modfile.get((crate, path[:-1]))
            if p and files[p].test_file:
                files[rel].test_file = True
                changed = True


def is_module(crate, path):
    return (crate, tuple(path)) in modfile


# ---------------------------------------------------------------- use trees
USE = re.compile(r"(?<![\w$])(pub(?:\s*\([^)]*\))?\s+)?use\s+")


def split_top(s):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def expand_tree(tree, prefix=()):
    """-> [(segments tuple, alias or None)]"""
    tree = tree.strip()
    if not tree:
        return []
    if tree.startswith("::"):
        tree = tree[2:]
    if tree.startswith("{") and tree.endswith("}"):
        res = []
        for p in split_top(tree[1:-1]):
            res += expand_tree(p, prefix)
        return res
    m = re.match(r"([\w$]+)\s*::\s*(.*)$", tree, re.S)
    if m:
        return expand_tree(m.group(2), prefix + (m.group(1),))
    m = re.match(r"([\w$*]+)(?:\s+as\s+(\w+))?$", tree.strip(), re.S)
    if not m:
        return []
    name, alias = m.group(1), m.group(2)
    if name == "self":
        return [(prefix, alias or (prefix[-1] if prefix else None))]
    if name == "*":
        return [(prefix + ("*",), None)]
    return [(prefix + (name,), alias or name)]


# ---------------------------------------------------------------- resolution
def absolutize(crate, cur, segs):
    """Make segs absolute within crate, given the current module path; None if external."""
    segs = list(segs)
    if not segs:
        return None
    if segs[0] in ("crate", "$crate"):
        return tuple(segs[1:])
    base = list(cur)
    if segs[0] == "self":
        segs = segs[1:]
    elif segs[0] == "super":
        while segs and segs[0] == "super":
            if not base:
                return None
            base.pop()
            segs = segs[1:]
    elif is_module(crate, tuple(base) + (segs[0],)):
        pass  # child module
    else:
        return None
    return tuple(base) + tuple(segs)


reexports = {}  # (crate, modpath) -> {name: abs path}


def build_reexports():
    for rel, f in files.items():
        for crate, path in f.mods:
            table = reexports.setdefault((crate, path), {})
            for m in USE.finditer(f.code):
                if not m.group(1):
                    continue
                end = f.code.find(";", m.end())
                for segs, alias in expand_tree(f.code[m.end():end]):
                    if alias is None or segs[-1] == "*":
                        continue
                    a = absolutize(crate, path, segs)
                    if a is not None:
                        table[alias] = a


def resolve(crate, absp, depth=0):
    """-> (file rel, is_module_ref)"""
    absp = tuple(absp)
    k = len(absp)
    while k > 0 and not is_module(crate, absp[:k]):
        k -= 1
    mod, rest = absp[:k], absp[k:]
    if not rest:
        return modfile.get((crate, mod)), True
    if FOLLOW and depth < 10:
        tgt = reexports.get((crate, mod), {}).get(rest[0])
        if tgt is not None and tgt != absp[:k + 1]:
            return resolve(crate, tgt + rest[1:], depth + 1)
    return modfile.get((crate, mod)), False


# ---------------------------------------------------------------- edges
INLINE = re.compile(r"(?<![\w:$])(\$?crate|super|self)((?:\s*::\s*\w+)+)")
edges = defaultdict(set)  # (src rel, dst rel) -> {line}
facade_edges = defaultdict(set)


def word_used(code_wo_use, name):
    return re.search(r"(?<![\w])" + re.escape(name) + r"(?![\w])", code_wo_use) is not None


def collect():
    for rel, f in files.items():
        if f.test_file:
            continue
        for crate, path in f.mods:
            code = f.code
            use_spans = []
            aliases = {}  # alias -> abs module path
            # use statements
            for m in USE.finditer(code):
                end = code.find(";", m.end())
                use_spans.append((m.start(), end))
            no_use = list(code)
            for a, b in use_spans:
                for k in range(a, b + 1):
                    if no_use[k] != "\n":
                        no_use[k] = " "
            no_use = "".join(no_use)
            for (a, b), m in zip(use_spans, USE.finditer(code)):
                is_pub = bool(m.group(1))
                ln = f.line(a)
                for segs, alias in expand_tree(code[m.end():b]):
                    if segs and segs[-1] == "*":
                        segs = segs[:-1]
                    ab = absolutize(crate, path, segs)
                    if ab is None:
                        continue
                    dst, is_mod = resolve(crate, ab)
                    if is_mod:
                        if alias:
                            aliases[alias] = ab
                        if not is_pub:
                            continue  # a module import: its inline uses make the edges
                    if dst is None or dst == rel:
                        continue
                    if is_pub and not FACADE and not (alias and word_used(no_use, alias)):
                        facade_edges[(rel, dst)].add(ln)
                    else:
                        edges[(rel, dst)].add(ln)
            # inline paths
            children = [n[-1] for (c, n) in modfile if c == crate and len(n) == len(path) + 1
                        and n[:-1] == path]
            heads = set(aliases) | set(children)
            pat = INLINE
            if heads:
                alt = "|".join(sorted(map(re.escape, heads), key=len, reverse=True))
                pat = re.compile(r"(?<![\w:$])(\$?crate|super|self|" + alt + r")((?:\s*::\s*\w+)+)")
            for m in pat.finditer(no_use):
                segs = [m.group(1)] + [x for x in re.split(r"\s*::\s*", m.group(2)) if x]
                if segs[0] in aliases:
                    ab = aliases[segs[0]] + tuple(segs[1:])
                else:
                    ab = absolutize(crate, path, segs)
                if ab is None:
                    continue
                dst, _ = resolve(crate, ab)
                if dst and dst != rel:
                    edges[(rel, dst)].add(f.line(m.start()))


# ---------------------------------------------------------------- graph algorithms
def tarjan(nodes, succ):
    index, low, onst, st, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(100000)

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        st.append(v)
        onst.add(v)
        for w in succ.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in onst:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = st.pop()
                onst.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            strong(v)
    return out


def top_of(rel):
    f = files[rel]
    crate, path = f.mods[0]
    if crate != LIB:
        return crate
    return path[0] if path else "lib"


def lines_fmt(ls):
    return ",".join(str(x) for x in sorted(ls))


# documented floors in lib.rs (optional): first word(s) of each row of the text block
def doc_floors():
    p = os.path.join(SRC, "lib.rs")
    if not os.path.exists(p):
        return {}
    txt = open(p).read()
    m = re.search(r"```text\n(.*?)```", txt, re.S)
    if not m:
        return {}
    order = {}
    rows = [r for r in m.group(1).split("\n") if r.strip()]
    for i, r in enumerate(rows):
        mm = re.match(r"(\w+(?:,\s*\w+)*)", r.strip().lstrip("/! "))
        for name in re.split(r",\s*", mm.group(1)) if mm else []:
            order[name] = len(rows) - i  # higher = upper floor
    return order


# ---------------------------------------------------------------- functions
FN = re.compile(r"(?<![\w])fn\s+(\w+)")
IMPL = re.compile(r"(?m)^[ \t]*(?:unsafe\s+)?(impl|(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?trait)\b")


def impl_regions(f):
    regs = []
    for m in IMPL.finditer(f.code):
        i = m.end()
        e = i
        depth = 0
        while e < len(f.code) and not (f.code[e] in "{;" and depth == 0):
            if f.code[e] in "<(":
                depth += 1
            elif f.code[e] in ">)" and not (f.code[e] == ">" and f.code[e - 1] == "-"):
                depth -= 1
            e += 1
        if e >= len(f.code) or f.code[e] != "{":
            continue
        head = f.code[i:e]
        head = re.sub(r"\bwhere\b.*", "", head, flags=re.S)
        if m.group(1).startswith("impl"):
            tail = re.split(r"\bfor\b", head)[-1]
        else:
            tail = head
        tail = re.sub(r"<.*", "", tail.strip(), flags=re.S)
        name = (re.findall(r"\w+", tail) or ["?"])[-1]
        regs.append((e, match_brace(f.code, e), name))
    return regs


def functions(f):
    out = []
    impls = impl_regions(f)
    for m in FN.finditer(f.code):
        j = m.end()
        depth = 0
        while j < len(f.code):
            ch = f.code[j]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif depth == 0 and ch in "{;":
                break
            j += 1
        if j >= len(f.code) or f.code[j] != "{":
            continue
        e = match_brace(f.code, j)
        owner = [n for a, b, n in impls if a < m.start() < b]
        name = (owner[-1] + "::" if owner else "") + m.group(1)
        start_line, end_line = f.line(m.start()), f.line(e)
        out.append((start_line, end_line - start_line + 1, name))
    return out


# ---------------------------------------------------------------- main
def apply_cuts():
    """--cut=A>B,C>D : drop edges from top-level module (or file) A to B, to try a plan."""
    cuts = [c.split(">") for c in OPTS.get("cut", "").split(",") if ">" in c]
    for a, b in cuts:
        for (x, y) in list(edges):
            if (x == a or top_of(x) == a) and (y == b or top_of(y) == b):
                del edges[(x, y)]
    if cuts:
        print("# simulated cuts: " + ", ".join(f"{a}>{b}" for a, b in cuts))


def main():
    build_reexports()
    collect()
    apply_cuts()
    live = [r for r in files if not files[r].test_file]
    succ = defaultdict(set)
    for (a, b) in edges:
        succ[a].add(b)
    res = {"cycles": [], "top_cycles": [], "big_files": [], "long_fns": []}
    print(f"# {len(live)} files ({len(files) - len(live)} test-only files skipped), "
          f"{len(edges)} file edges ({len(facade_edges)} facade-only re-export edges "
          f"{'counted' if FACADE else 'ignored'}; re-exports {'followed' if FOLLOW else 'not followed'})")

    print("\n## (a) file cycles (SCCs > 1 file)")
    sccs = [c for c in tarjan(live, succ) if len(c) > 1]
    for c in sorted(sccs, key=lambda c: (len(c), c)):
        cs = set(c)
        print(f"\n* SCC of {len(c)} files: " + ", ".join(c))
        es = []
        for (a, b), ls in sorted(edges.items()):
            if a in cs and b in cs:
                print(f"    {a} -> {b}  @ {lines_fmt(ls)}")
                es.append([a, b, sorted(ls)])
        res["cycles"].append({"files": c, "edges": es})
    if not sccs:
        print("  none")

    print("\n## (b) top-level module floors")
    tsucc = defaultdict(set)
    tedges = defaultdict(list)
    tops = sorted(set(top_of(r) for r in live))
    for (a, b), ls in edges.items():
        ta, tb = top_of(a), top_of(b)
        if ta != tb:
            tsucc[ta].add(tb)
            tedges[(ta, tb)].append((a, b, ls))
    tsccs = tarjan(tops, tsucc)
    comp = {}
    for i, c in enumerate(tsccs):
        for t in c:
            comp[t] = i
    # floor = longest path down in the condensation (leaves = 0)
    csucc = defaultdict(set)
    for a in tsucc:
        for b in tsucc[a]:
            if comp[a] != comp[b]:
                csucc[comp[a]].add(comp[b])
    memo = {}

    def height(c):
        if c not in memo:
            memo[c] = 1 + max((height(d) for d in csucc[c]), default=-1)
        return memo[c]

    floors = defaultdict(list)
    for i, c in enumerate(tsccs):
        floors[height(i)].append("{" + ",".join(c) + "}" if len(c) > 1 else c[0])
    for h in sorted(floors, reverse=True):
        print(f"  floor {h:2}: " + " ".join(sorted(floors[h])))
    docs = doc_floors()
    for c in tsccs:
        if len(c) < 2:
            continue
        cs = set(c)
        print(f"\n* top-level cycle: {{{', '.join(c)}}}")
        for (ta, tb), lst in sorted(tedges.items()):
            if ta in cs and tb in cs:
                up = ""
                if ta in docs and tb in docs:
                    up = "  [UPWARD vs lib.rs floors]" if docs[tb] > docs[ta] else \
                         ("  [same documented floor]" if docs[tb] == docs[ta] else "")
                print(f"    {ta} -> {tb}{up}")
                for a, b, ls in sorted(lst):
                    print(f"        {a}:{lines_fmt(ls)} -> {b}")
                res["top_cycles"].append({"from": ta, "to": tb, "edges": [[a, b, sorted(ls)] for a, b, ls in lst]})
    if docs:
        print("\n* other edges going upward against the documented lib.rs floors:")
        for (ta, tb), lst in sorted(tedges.items()):
            if ta in docs and tb in docs and docs[tb] > docs[ta] and comp[ta] != comp[tb]:
                print(f"    {ta} -> {tb}: " + "; ".join(f"{a}:{lines_fmt(ls)}->{b}" for a, b, ls in sorted(lst)))

    print(f"\n## (c) files over {MAX_FILE} lines (without #[cfg(test)] mod blocks)")
    for r in sorted(live, key=lambda r: -(files[r].nlines - files[r].mod_test_lines())):
        f = files[r]
        n = f.nlines - f.mod_test_lines()
        if n > MAX_FILE:
            print(f"  {n:5} non-test / {f.nlines:5} total  {r}")
            res["big_files"].append([r, n, f.nlines])

    print(f"\n## (d) functions over {MAX_FN} lines (outside #[cfg(test)])")
    fns = []
    for r in live:
        for ln, length, name in functions(files[r]):
            if length > MAX_FN:
                fns.append((length, r, ln, name))
    for length, r, ln, name in sorted(fns, reverse=True):
        crate, path = files[r].mods[0]
        q = "::".join(((crate,) if crate != LIB else ()) + path + (name,))
        print(f"  {length:4} lines  {r}:{ln}  {q}")
        res["long_fns"].append([r, ln, length, q])
    if "json" in OPTS:
        json.dump(res, open(OPTS["json"], "w"), indent=1)


if __name__ == "__main__":
    main()
