#!/usr/bin/env python3
"""Score each tool's report on the real-code tree against the planted truth.

    score.py OUT [--examples N] [--top N]

Reads OUT/truth.jsonl (from plant.py), OUT/times.tsv and the reports run.sh wrote in OUT/
(lh.json, kf.json, bl.json, gl.json, ds.json when present). For each tool it prints:
  - planted credentials found: a planted value counts as found when the tool reports a finding
    in its file on one of its lines, or reports the value itself (a key id's finding that carries
    the paired secret finds the secret too);
  - findings beyond the planted ones: every other finding, total and by rule, with example lines
    read from the tree, anything that looks like a secret masked;
  - the wall time of its one run.
Writes OUT/score.json (the numbers) and OUT/lh-extra.txt (every leakhound finding beyond the
planted ones: rule, path, line, masked context).
"""
import argparse
import collections
import json
import math
import os
import re

TOOLS = [("leakhound", "lh.json"), ("Kingfisher", "kf.json"), ("betterleaks", "bl.json"),
         ("gitleaks", "gl.json"), ("detect-secrets", "ds.json")]


class Finding:
    __slots__ = ("rule", "path", "line", "secrets", "also", "context")

    def __init__(self, rule, path, line, secrets=(), also=(), context=None):
        self.rule, self.path, self.line = rule, path, int(line)
        self.secrets = [s for s in secrets if s]
        self.also = list(also)  # (path, line, secret) of paired parts reported with it
        self.context = context


def rel(path, tree):
    path = path.replace("\\", "/")
    for pre in (tree.rstrip("/") + "/", "tree/", "./tree/"):
        if path.startswith(pre):
            return path[len(pre):]
    return path.split("/tree/", 1)[-1]


def load(tool, path, tree):
    d = json.load(open(path))
    out = []
    if tool == "leakhound":
        for f in d["findings"]:
            out.append(Finding(f["rule"], rel(f["path"], tree), f["line"], [f.get("secret")],
                               context=f.get("context")))
    elif tool == "Kingfisher":
        for f in d["findings"]:
            x = f["finding"]
            caps = x.get("dependent_captures") or {}
            out.append(Finding(f["rule"]["id"], rel(x["path"], tree), x["line"],
                               [x.get("snippet")] + [v for v in caps.values() if isinstance(v, str)]))
    elif tool == "betterleaks":
        for f in d.get("findings") or []:
            also = []
            for cs in f.get("component_sets") or []:
                for c in cs.get("components") or []:
                    loc = c.get("location") or {}
                    also.append((rel(loc.get("path", ""), tree), loc.get("start_line", 0),
                                 (c.get("match") or {}).get("value")))
            m = f.get("match") or {}
            out.append(Finding(f["rule_id"], rel(f["location"]["path"], tree),
                               f["location"]["start_line"], [m.get("value")], also))
    elif tool == "gitleaks":
        for f in d:
            out.append(Finding(f["RuleID"], rel(f["File"], tree), f["StartLine"], [f.get("Secret")]))
    elif tool == "detect-secrets":
        for p, fs in d.get("results", {}).items():
            for f in fs:
                out.append(Finding(f["type"], rel(p, tree), f["line_number"]))
    return out


def entropy(s):
    c = collections.Counter(s)
    return -sum(n / len(s) * math.log2(n / len(s)) for n in c.values())


# Runs of token characters; "." and ":" split them, so dotted names and URLs are judged by parts.
TOKEN = re.compile(r"[A-Za-z0-9+/=_\-~@!#%^&*]{16,}")


def mask(line, secrets=()):
    """Mask what looks like a secret: any long run of token characters with letters and digits
    and high entropy (or very high entropy), and PEM blocks. Identifiers, dotted names and short
    literals stay readable: they are what the false alarms are made of."""
    def hide(s):
        return s[:4] + "*" * min(len(s) - 4, 12) + f"({len(s)})"

    def looks_secret(s):
        core = s.strip("=-_")
        if "-----BEGIN" in s:
            return True
        if len(core) < 16:
            return False
        h = entropy(core)
        return (re.search(r"\d", core) and re.search(r"[A-Za-z]", core) and h >= 3.5) or \
            (len(core) >= 24 and h >= 4.3)

    return TOKEN.sub(lambda m: hide(m.group(0)) if looks_secret(m.group(0)) else m.group(0), line)


def tree_line(tree, path, line, cache={}):
    if path not in cache:
        try:
            cache[path] = open(os.path.join(tree, path), encoding="utf-8", errors="replace").read().splitlines()
        except OSError:
            cache[path] = []
    lines = cache[path]
    return lines[line - 1] if 0 < line <= len(lines) else ""


def score(findings, truth):
    by_path = collections.defaultdict(list)
    for i, t in enumerate(truth):
        by_path[t["path"]].append(i)
    found, extra = set(), []

    def hits(path, line, secrets):
        got = set()
        for i in by_path.get(path, ()):
            t = truth[i]
            if t["line"] <= line <= t["line_end"] or any(
                    len(s) >= 8 and (s in t["secret"] or t["secret"] in s) for s in secrets):
                got.add(i)
        return got

    for f in findings:
        got = hits(f.path, f.line, f.secrets)
        for p, l, s in f.also:
            got |= hits(p, int(l or 0), [s] if s else [])
        if got:
            found |= got
        else:
            extra.append(f)
    return found, extra


def area(path):
    """The tree's top folder for a path: python, js, go, java or rust."""
    return path.split("/", 1)[0]


def examples(extra, rule, n):
    """N findings of RULE, taken in turn from each top folder and then from different files."""
    by_area = collections.defaultdict(list)
    for f in extra:
        if f.rule == rule:
            by_area[area(f.path)].append(f)
    out, seen = [], set()
    while len(out) < n and any(by_area.values()):
        for k in sorted(by_area):
            while by_area[k]:
                f = by_area[k].pop(0)
                if f.path not in seen or not any(g.path not in seen for g in by_area[k]):
                    seen.add(f.path)
                    out.append(f)
                    break
            if len(out) >= n:
                break
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--examples", type=int, default=3)
    ap.add_argument("--top", type=int, default=10)
    a = ap.parse_args()
    tree = os.path.join(a.out, "tree")
    truth = [json.loads(l) for l in open(os.path.join(a.out, "truth.jsonl"))]
    times = {}
    if os.path.exists(os.path.join(a.out, "times.tsv")):
        for l in open(os.path.join(a.out, "times.tsv")):
            name, secs = l.split("\t")[:2]
            times[name] = float(secs)
    kinds = sorted({t["kind"] for t in truth})
    print(f"{len(truth)} planted credentials of {len(kinds)} kinds in "
          f"{len({t['path'] for t in truth})} files\n")
    summary, details = {}, []
    print("| tool | planted found | findings beyond the planted | wall time (one run) |")
    print("|---|---:|---:|---:|")
    for tool, fname in TOOLS:
        p = os.path.join(a.out, fname)
        if not os.path.exists(p):
            continue
        fs = load(tool, p, tree)
        found, extra = score(fs, truth)
        by_rule = collections.Counter(f.rule for f in extra)
        missed = collections.Counter(truth[i]["kind"] for i in range(len(truth)) if i not in found)
        missed_ctx = collections.Counter(truth[i]["context"] for i in range(len(truth)) if i not in found)
        t = times.get(tool)
        print(f"| {tool} | {len(found)} / {len(truth)} | {len(extra)} | "
              f"{f'{t:.1f} s' if t is not None else '—'} |")
        summary[tool] = {"found": len(found), "planted": len(truth), "findings": len(fs),
                         "extra": len(extra), "extra_by_rule": dict(by_rule.most_common()),
                         "missed_by_kind": dict(missed.most_common()),
                         "missed_by_context": dict(missed_ctx.most_common()), "seconds": t,
                         "extra_by_area": dict(collections.Counter(area(f.path) for f in extra))}
        details.append((tool, fs, extra, by_rule, missed, missed_ctx))
        if tool == "leakhound":
            with open(os.path.join(a.out, "lh-extra.txt"), "w") as w:
                w.write(f"# leakhound findings beyond the planted ones: {len(extra)}\n"
                        "# rule\tpath:line\tcontext (secret-looking values masked)\n")
                for f in sorted(extra, key=lambda f: (f.rule, f.path, f.line)):
                    ctx = f.context if f.context is not None else tree_line(tree, f.path, f.line)
                    w.write(f"{f.rule}\t{f.path}:{f.line}\t{mask(ctx.strip(), f.secrets)[:300]}\n")

    for tool, fs, extra, by_rule, missed, missed_ctx in details:
        print(f"\n## {tool}: {len(fs)} findings, {len(extra)} beyond the planted ones")
        areas = collections.Counter(area(f.path) for f in extra)
        print("beyond the planted, by top folder: " + ", ".join(f"{k} {v}" for k, v in sorted(areas.items())))
        if missed:
            print(f"missed planted, by kind: {dict(missed.most_common())}")
            print(f"missed planted, by place: {dict(missed_ctx.most_common())}")
        for rule, n in by_rule.most_common(a.top):
            print(f"\n  {rule}: {n}")
            for f in examples(extra, rule, a.examples):
                line = tree_line(tree, f.path, f.line).strip()
                print(f"    {f.path}:{f.line}: {mask(line, f.secrets)[:160]}")
        rest = len(by_rule) - a.top
        if rest > 0:
            print(f"\n  … and {rest} more rules: "
                  + ", ".join(f"{r} {n}" for r, n in by_rule.most_common()[a.top:]))
    json.dump(summary, open(os.path.join(a.out, "score.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
