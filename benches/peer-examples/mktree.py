#!/usr/bin/env python3
"""Write each example of examples.jsonl to a file of its own.

    mktree.py EXAMPLES OUT

OUT/tree/positives/<peer>/<n>.txt and OUT/tree/negatives/<peer>/<n>.txt, n counting from 1 in
file order per peer and kind; an example checked under a file path (gitleaks'
ValidateWithPaths) goes to OUT/tree/<kind>s/<peer>/<n>/<that path> instead. A newline is added to
text that does not end in one. OUT/index.jsonl maps every file back to its example:
{"file", "peer", "rule", "kind", "form", "also_positive", "group", "text"}.
"""
import json
import os
import shutil
import sys


def main():
    src, out = sys.argv[1], sys.argv[2]
    tree = os.path.join(out, "tree")
    if os.path.exists(tree):
        shutil.rmtree(tree)
    counters = {}
    with open(src) as f, open(os.path.join(out, "index.jsonl"), "w") as idx:
        for line in f:
            e = json.loads(line)
            if "meta" in e:
                continue
            key = (e["kind"], e["peer"])
            n = counters[key] = counters.get(key, 0) + 1
            folder = os.path.join(f"{e['kind']}s", e["peer"])
            if e.get("path"):
                rel = os.path.join(folder, str(n), e["path"].lstrip("/").replace("..", "__"))
            else:
                rel = os.path.join(folder, f"{n}.txt")
            path = os.path.join(tree, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            text = e["text"]
            if text and not text.endswith("\n"):
                text += "\n"
            with open(path, "w", encoding="utf-8") as g:
                g.write(text)
            idx.write(json.dumps({"file": os.path.join(folder, str(n)), "peer": e["peer"],
                                  "rule": e["rule"], "kind": e["kind"], "form": e["form"],
                                  "also_positive": bool(e.get("also_positive")),
                                  "group": e.get("group"),
                                  "text": e["text"]}, ensure_ascii=False) + "\n")
    total = sum(counters.values())
    print(f"wrote {total} files under {tree}", file=sys.stderr)


if __name__ == "__main__":
    main()
