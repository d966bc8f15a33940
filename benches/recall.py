#!/usr/bin/env python3
"""Helpers for benches/compare.sh.

  recall.py recall OUT          recall on OUT/truth.jsonl for each tool's report in OUT
  recall.py ratios HYPERFINE    medians and ratios against leakhound from a hyperfine export
  recall.py concat OUT FILE N   concatenate OUT/tree's files into FILE up to N bytes
"""
import json, os, sys

def findings(tool, path):
    """(relative path, line) for every finding in a tool's report."""
    d = json.load(open(path))
    out = []
    if tool == "leakhound":
        out = [(f["path"], f["line"]) for f in d["findings"]]
    elif tool == "kingfisher":
        out = [(f["finding"]["path"], f["finding"]["line"]) for f in d["findings"]]
    elif tool == "betterleaks":
        out = [(f["location"]["path"], f["location"]["start_line"]) for f in d["findings"]]
    elif tool == "gitleaks":
        out = [(f["File"], f["StartLine"]) for f in d]
    return [(p.split("/tree/", 1)[-1], int(l)) for p, l in out]

def recall(out):
    truth = [json.loads(l) for l in open(os.path.join(out, "truth.jsonl"))]
    print(f"\n{len(truth)} planted secrets ({len({t['rule'] for t in truth})} kinds)\n")
    print(f"{'tool':<12} {'found':>7} {'recall':>8} {'findings':>9} {'beyond truth':>13}")
    for tool, f in [("leakhound", "lh.json"), ("kingfisher", "kf.json"),
                    ("betterleaks", "bl.json"), ("gitleaks", "gl.json")]:
        p = os.path.join(out, f)
        if not os.path.exists(p):
            continue
        fs = findings(tool, p)
        lines = {}
        for path, line in fs:
            lines.setdefault(path, set()).add(line)
        # A multi-line secret (a private key) may be reported on its BEGIN line.
        hit = lambda t: any(t["line"] + d in lines.get(t["path"], ()) for d in (0, -1))
        found = sum(hit(t) for t in truth)
        truth_lines = {(t["path"], t["line"] + d) for t in truth for d in (0, -1)}
        beyond = sum((p, l) not in truth_lines for p, l in fs)
        print(f"{tool:<12} {found:>7} {found / len(truth):>8.1%} {len(fs):>9} {beyond:>13}")
    by_kind = {}
    lh = os.path.join(out, "lh.json")
    if os.path.exists(lh):
        got = {(p, l) for p, l in findings("leakhound", lh)}
        for t in truth:
            k = by_kind.setdefault(t["rule"], [0, 0])
            k[1] += 1
            k[0] += (t["path"], t["line"]) in got
        missed = {k: v for k, v in by_kind.items() if v[0] < v[1]}
        print("\nleakhound misses by kind:", missed or "none")

def ratios(path):
    res = json.load(open(path))["results"]
    base = next(r for r in res if r["command"] == "leakhound")["median"]
    print(f"\n{'tool':<12} {'median s':>9} {'x leakhound':>12}")
    for r in res:
        print(f"{r['command']:<12} {r['median']:>9.3f} {r['median'] / base:>12.2f}")

def concat(out, dest, limit):
    tree = os.path.join(out, "tree")
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(tree) for f in fs)
    n = 0
    with open(dest, "wb") as w:
        while n < limit:
            for f in files:
                b = open(f, "rb").read()
                w.write(b)
                n += len(b)
                if n >= limit:
                    break

if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "recall":
        recall(sys.argv[2])
    elif cmd == "ratios":
        ratios(sys.argv[2])
    elif cmd == "concat":
        concat(sys.argv[2], sys.argv[3], int(sys.argv[4]))
