#!/usr/bin/env python3
"""Sort the positives leakhound misses at its default confidence into rough groups.

    misses.py OUT

Reads OUT/index.jsonl and the reports run.sh wrote in OUT/ (as score.py does) and prints, one
per secret (a gitleaks sample-secret call's files count 1/size each), how many missed
secrets fall in each group and how many of those some peer (Kingfisher, betterleaks,
gitleaks) finds. Each example goes to the first group whose test fits its text:
- found at low: leakhound reports it at --min-confidence low;
- placeholder value: the patterns in PLACEHOLDER (sequences, `xxxx`, the RFC 4122 example
  UUID, runs of one character, `password`/`example` inside the value);
- not a secret: host names, client ids, usernames, ARNs, age public keys (NOT_SECRET);
- other: the rest.
The tests read the whole example, not the value a rule would take, so the groups are an
estimate; the examples themselves are in OUT/tree/.
"""
import collections
import json
import re
import sys

import score

PLACEHOLDER = re.compile(
    r"xxxx|changeme|your[_-]|placeholder|passw(or|0)rd|redacted|dummy|example|sample|insert"
    r"|replace|\*\*\*\*|abcdefgh|12345678|0123456|123e4567|1234567890|abcdef|(.)\2{5}"
    r"|secret@|:secret|=secret|EXAMP", re.I)
NOT_SECRET = re.compile(
    r"^[\w.-]+\.(jfrog\.io|okta\.com|auth0\.com|myshopify\.com|databricks\.com|azure\.com"
    r"|windows\.net|googleapis\.com|amazonaws\.com)|^arn:|^age1|REACT_APP_[A-Z_]*USER"
    r"|apps\.googleusercontent|_id|client_?id|username|@\w+\.(com|net)|https?://[^:@]+$",
    re.I | re.M)


def found(out, tool, report):
    return {e for p, _ in score.report_paths(tool, f"{out}/{report}")
            if (e := score.example_of(p))}


def main(out):
    index = [json.loads(line) for line in open(f"{out}/index.jsonl")]
    default = found(out, "leakhound", "lh.json")
    low = found(out, "leakhound-low", "lh-low.json")
    peers = set().union(*(found(out, t, r) for t, r in
                          (("Kingfisher", "kf.json"), ("betterleaks", "bl.json"),
                           ("gitleaks", "gl.json"))))
    size = collections.Counter(e["group"] for e in index
                               if e["kind"] == "positive" and e.get("group"))
    groups, by_peer = collections.Counter(), collections.Counter()
    for e in index:
        if e["kind"] != "positive" or e["file"] in default:
            continue
        text = e["text"]
        if e["file"] in low:
            g = "found at low"
        elif PLACEHOLDER.search(text):
            g = "placeholder value"
        elif NOT_SECRET.search(text):
            g = "not a secret"
        else:
            g = "other"
        w = 1 / size[e["group"]] if e.get("group") else 1
        groups[g] += w
        if e["file"] in peers:
            by_peer[g] += w
    print(f"missed at the default, one per secret: {sum(groups.values()):.0f}")
    for g, n in groups.most_common():
        print(f"  {g}: {n:.0f} ({by_peer[g]:.0f} found by some peer)")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
