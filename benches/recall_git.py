#!/usr/bin/env python3
"""Recall of a git history scan against gen-repo's truth: every planted secret must be found
with the commit that introduced it and the path it was introduced at.

    leakhound git REPO --format jsonl --show-secrets -o found.jsonl
    python3 benches/recall_git.py OUT_DIR/truth.jsonl found.jsonl
"""
import json
import sys


def main():
    truth = [json.loads(l) for l in open(sys.argv[1])]
    found = [json.loads(l) for l in open(sys.argv[2])]
    at = {}
    for f in found:
        c = (f["provenance"].get("commit") or {}).get("id", "")
        at.setdefault(f["secret"], set()).add((c, f["provenance"]["path"]))
    missed = [t for t in truth if (t["commit"], t["path"]) not in at.get(t["secret"], set())]
    wrong = [t for t in missed if t["secret"] in at]
    planted = {t["secret"] for t in truth}
    extra = [f for f in found if f["secret"] not in planted]
    print(
        f"planted {len(truth)} ({sum(t['deleted'] for t in truth)} deleted later); "
        f"found with their introducing commit {len(truth) - len(missed)}; "
        f"found elsewhere only {len(wrong)}; missed {len(missed) - len(wrong)}; "
        f"findings {len(found)}, not planted {len(extra)}"
    )
    for t in missed[:10]:
        print("  missed:", t["rule"], t["path"], t["commit"][:12], file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
