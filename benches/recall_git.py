#!/usr/bin/env python3
"""Recall of history scans against gen-repo's truth: is each planted secret found, and found
with the commit that introduced it and the path it was introduced at?

    python3 benches/recall_git.py TRUTH.jsonl TOOL=REPORT [TOOL=REPORT ...]

TOOL is leakhound (JSONL with --show-secrets), gitleaks, betterleaks or kingfisher (JSON).
Exit status 1 if leakhound missed any planted secret or its commit.
"""
import json
import sys


def leakhound(path):
    for line in open(path):
        f = json.loads(line)
        p = f["provenance"]
        yield f["secret"], (p.get("commit") or {}).get("id", ""), p["path"]


def gitleaks(path):
    for f in json.load(open(path)) or []:
        yield f["Secret"], f["Commit"], f["File"]


def betterleaks(path):
    for f in json.load(open(path)).get("findings") or []:
        yield f["match"]["value"], f["attributes"].get("git.sha", ""), f["location"]["path"]


def kingfisher(path):
    for f in json.load(open(path)).get("findings") or []:
        g = f["finding"].get("git_metadata") or {}
        yield (
            f["finding"]["snippet"],
            (g.get("commit") or {}).get("id", ""),
            (g.get("file") or {}).get("path", f["finding"]["path"]),
        )


READERS = {"leakhound": leakhound, "gitleaks": gitleaks, "betterleaks": betterleaks,
           "kingfisher": kingfisher}


def same(a, b):
    # Tools cut multi-line and prefixed secrets differently; one inside the other counts.
    a, b = a.strip(), b.strip()
    return len(a) >= 8 and len(b) >= 8 and (a in b or b in a)


def main():
    truth = [json.loads(l) for l in open(sys.argv[1])]
    status = 0
    for arg in sys.argv[2:]:
        tool, path = arg.split("=", 1)
        found = list(READERS[tool](path))
        by_secret = {}
        for s, c, p in found:
            by_secret.setdefault(s, []).append((c, p))
        anywhere = at_commit = 0
        for t in truth:
            hits = by_secret.get(t["secret"])
            if hits is None:
                hits = [h for s, hs in by_secret.items() if same(s, t["secret"]) for h in hs]
            anywhere += bool(hits)
            at_commit += (t["commit"], t["path"]) in hits
        planted = {t["secret"] for t in truth}
        extra = sum(1 for s, _, _ in found
                    if s not in planted and not any(same(s, x) for x in planted))
        print(f"{tool:<12} planted {len(truth)}: found {anywhere}, with introducing commit "
              f"{at_commit}; {len(found)} findings, {extra} not planted")
        if tool == "leakhound" and at_commit < len(truth):
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
