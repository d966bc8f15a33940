#!/usr/bin/env python3
"""Score each tool's report on the peer-example tree.

    score.py OUT [--top N] [--json]

Reads OUT/index.jsonl (from mktree.py), OUT/times.tsv and the reports run.sh wrote in OUT/
(lh.json, lh-low.json, kf.json, bl.json, gl.json). An example counts as found (a positive) or
flagged (a negative) when the tool reports any finding in its file (or, for an example checked
under a path, anywhere in its folder). Negatives whose exact text is also a positive somewhere
in the set (index "also_positive") are left out of the false-alarm rate and shown apart.

Prints, per tool: positives found / total, overall and per source peer; the same per form of
gitleaks example; the mean over source rules of per-rule recall; negatives flagged / total.
"One per secret" weighs each gitleaks GenerateSampleSecret(s) call (one secret written in up to
27 assignment syntaxes; index "group") as one example: each of its files counts 1/size. The
per-peer columns use that weighting too; "every example" counts every file as one.
Writes OUT/score.json (the numbers), OUT/lh-misses.txt (every positive leakhound misses even at
--min-confidence low, grouped by provider and rule, the top providers first) and
OUT/lh-false-alarms.txt (the negatives leakhound flags at its default confidence).
"""
import argparse
import collections
import json
import os
import re

TOOLS = [("leakhound", "lh.json", "leakhound (default: medium)"),
         ("leakhound-low", "lh-low.json", "leakhound --min-confidence low"),
         ("Kingfisher", "kf.json", "Kingfisher 2.14 (its default, medium)"),
         ("betterleaks", "bl.json", "betterleaks"),
         ("gitleaks", "gl.json", "gitleaks")]
PEERS = ["gitleaks", "kingfisher", "noseyparker", "detect-secrets"]
FILE_RE = re.compile(r"(?:^|/)tree/((?:positives|negatives)/[^/]+/\d+)(?:\.txt$|/)")
FILE_RE_REL = re.compile(r"^((?:positives|negatives)/[^/]+/\d+)(?:\.txt$|/)")


def report_paths(tool, path):
    d = json.load(open(path))
    if tool.startswith("leakhound"):
        return [(f["path"], f["rule"]) for f in d["findings"]]
    if tool == "Kingfisher":
        return [(f["finding"]["path"], f["rule"]["id"]) for f in d["findings"]]
    if tool == "betterleaks":
        return [(f["location"]["path"], f["rule_id"]) for f in d.get("findings") or []]
    if tool == "gitleaks":
        return [(f["File"], f["RuleID"]) for f in d]
    raise ValueError(tool)


def example_of(path):
    path = path.replace("\\", "/")
    m = FILE_RE.search(path) or FILE_RE_REL.match(path)
    return m.group(1) if m else None


# Provider names for grouping misses: the source rule id with the peer's own prefix and
# numbering removed, and a few spellings merged.
ALIASES = {"aws_key": "aws", "amazon": "aws", "new": "newrelic", "new-relic": "newrelic",
           "azure_storage_key": "azure", "ibm_cloud_iam": "ibm", "ibm_cos_hmac": "ibm",
           "basic_auth": "basic-auth", "private_key": "privatekey", "private": "privatekey",
           "github_token": "github", "gitlab_token": "gitlab", "mailchimp_key": "mailchimp",
           "pypi_token": "pypi", "square_oauth": "square", "stripe_key": "stripe",
           "telegram_token": "telegram", "hashicorp_vault": "vault", "gcp": "google",
           "googleoauth": "google", "jwt-base64": "jwt", "sendinblue": "brevo",
           "1password-secret-key": "1password", "openshift": "openshift", "slack-webhook": "slack"}


def provider(peer, rule):
    rule = rule or "?"
    if peer in ("kingfisher", "noseyparker"):
        parts = rule.split(".")
        p = parts[1] if len(parts) >= 2 else rule
    elif peer == "detect-secrets":
        p = rule.split(".")[0]
    else:  # gitleaks: slack-bot-token -> slack
        p = rule if rule in ALIASES else rule.split("-")[0]
    p = p.lower()
    return ALIASES.get(p, p)


def pct(a, b):
    return f"{100.0 * a / b:.1f} %" if b else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--top", type=int, default=60, help="providers in the misses file")
    args = ap.parse_args()
    out = args.out

    index = [json.loads(line) for line in open(os.path.join(out, "index.jsonl"))]
    by_file = {e["file"]: e for e in index}
    times = {}
    if os.path.exists(os.path.join(out, "times.tsv")):
        for line in open(os.path.join(out, "times.tsv")):
            name, secs, rc = line.rstrip("\n").split("\t")
            times[name] = (float(secs), int(rc))

    hits = {}      # tool -> {example file: [rule ids]}
    unknown = collections.Counter()
    for tool, fname, _ in TOOLS:
        p = os.path.join(out, fname)
        if not os.path.exists(p):
            continue
        h = collections.defaultdict(list)
        for path, rule in report_paths(tool, p):
            ex = example_of(path)
            if ex is None or ex not in by_file:
                unknown[tool] += 1
                continue
            h[ex].append(rule)
        hits[tool] = h

    pos = [e for e in index if e["kind"] == "positive"]
    neg = [e for e in index if e["kind"] == "negative" and not e["also_positive"]]
    neg_also = [e for e in index if e["kind"] == "negative" and e["also_positive"]]
    rules = collections.defaultdict(list)
    for e in pos:
        rules[(e["peer"], e["rule"])].append(e)
    # A secret gitleaks puts into its 25-27 GenerateSampleSecrets syntaxes weighs as one example.
    gsize = collections.Counter(e["group"] for e in pos if e.get("group"))
    weight = {e["file"]: 1.0 / gsize[e["group"]] if e.get("group") else 1.0 for e in pos}

    def wsum(es, h=None):
        return sum(weight[e["file"]] for e in es if h is None or e["file"] in h)
    forms = sorted({e["form"] for e in pos if e["peer"] == "gitleaks"})

    score = {"tools": {}, "totals": {"positives": len(pos), "negatives": len(neg),
                                     "negatives_also_positive": len(neg_also),
                                     "source_rules": len(rules)}}
    lines = []
    w = lines.append
    w(f"examples: {len(pos)} positive ({wsum(pos):.0f} counting each gitleaks sample-secret call "
      f"once), {len(neg)} negative (+{len(neg_also)} negatives that are also positives elsewhere, "
      f"not counted), from {len(rules)} source rules\n")
    head = (f"| tool | positives, one per secret ({wsum(pos):.0f}) | every example ({len(pos)}) | "
            + " | ".join(f"{p} ({wsum([e for e in pos if e['peer'] == p]):.0f})" for p in PEERS)
            + " | mean per-rule recall | negatives flagged | wall time |")
    w(head)
    w("|" + "---|" * (head.count("|") - 1))
    for tool, fname, label in TOOLS:
        if tool not in hits:
            continue
        h = hits[tool]
        found = [e for e in pos if e["file"] in h]
        flagged = [e for e in neg if e["file"] in h]
        per_peer = {}
        for p in PEERS:
            tot = [e for e in pos if e["peer"] == p]
            per_peer[p] = (wsum(tot, h), wsum(tot))
        per_form = {}
        for fm in forms:
            tot = [e for e in pos if e["peer"] == "gitleaks" and e["form"] == fm]
            per_form[fm] = (sum(e["file"] in h for e in tot), len(tot))
        neg_peer = {}
        for p in PEERS:
            tot = [e for e in neg if e["peer"] == p]
            neg_peer[p] = (sum(e["file"] in h for e in tot), len(tot))
        macro = sum(sum(e["file"] in h for e in es) / len(es) for es in rules.values()) / len(rules)
        t = times.get(tool)
        score["tools"][tool] = {
            "positives_found": len(found), "positives": len(pos),
            "weighted_found": wsum(pos, h), "weighted_positives": wsum(pos),
            "per_peer": per_peer, "gitleaks_per_form": per_form,
            "mean_rule_recall": macro,
            "negatives_flagged": len(flagged), "negatives": len(neg), "negatives_per_peer": neg_peer,
            "also_positive_negatives_flagged": sum(e["file"] in h for e in neg_also),
            "seconds": t[0] if t else None, "unmatched_findings": unknown[tool]}
        w(f"| {label} | **{pct(wsum(pos, h), wsum(pos))}** ({wsum(pos, h):.0f}) | "
          f"{pct(len(found), len(pos))} ({len(found)}) | "
          + " | ".join(f"{pct(*per_peer[p])} ({per_peer[p][0]:.0f})" for p in PEERS)
          + f" | {100 * macro:.1f} % | {pct(len(flagged), len(neg))} ({len(flagged)}/{len(neg)}) | "
          + (f"{t[0]:.1f} s |" if t else "- |"))
    w("")
    w("gitleaks-sourced positives by form (found / total):")
    head = "| tool | " + " | ".join(f"{fm} ({score['tools'][next(iter(hits))]['gitleaks_per_form'][fm][1]})"
                                    for fm in forms) + " |"
    w(head)
    w("|" + "---|" * (head.count("|") - 1))
    for tool, fname, label in TOOLS:
        if tool in score["tools"]:
            pf = score["tools"][tool]["gitleaks_per_form"]
            w(f"| {label} | " + " | ".join(f"{pct(*pf[fm])} ({pf[fm][0]})" for fm in forms) + " |")
    w("")
    w("negatives flagged, by source peer (flagged / total):")
    head = "| tool | " + " | ".join(f"{p} ({sum(e['peer'] == p for e in neg)})" for p in PEERS) + \
        f" | also-positive negatives ({len(neg_also)}) |"
    w(head)
    w("|" + "---|" * (head.count("|") - 1))
    for tool, fname, label in TOOLS:
        if tool in score["tools"]:
            s = score["tools"][tool]
            w(f"| {label} | " + " | ".join(f"{s['negatives_per_peer'][p][0]}" for p in PEERS)
              + f" | {s['also_positive_negatives_flagged']} |")
    peer_tools = [t for t in ("Kingfisher", "betterleaks", "gitleaks") if t in hits]
    if peer_tools and "leakhound-low" in hits:
        union = [e for e in pos if any(e["file"] in hits[t] for t in peer_tools)]
        lh_gap = [e for e in union if e["file"] not in hits["leakhound-low"]]
        lh_only = [e for e in pos if e["file"] in hits["leakhound-low"]
                   and not any(e["file"] in hits[t] for t in peer_tools)]
        w("")
        w(f"found by at least one of {', '.join(peer_tools)}: {pct(wsum(union), wsum(pos))} "
          f"({wsum(union):.0f} one per secret); of those, leakhound at low misses {wsum(lh_gap):.0f}; "
          f"leakhound at low finds {wsum(lh_only):.0f} that none of them finds")
        score["peer_union"] = {"found": wsum(union), "leakhound_low_misses": wsum(lh_gap),
                               "leakhound_low_only": wsum(lh_only)}
    if any(unknown.values()):
        w("")
        w("findings outside any example file: " + ", ".join(f"{k} {v}" for k, v in unknown.items()))
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(out, "score.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(out, "score.json"), "w") as f:
        json.dump(score, f, indent=1)

    # leakhound's misses (at low confidence) grouped by provider, then by rule, ordered by the
    # weighted count (a gitleaks sample-secret call's 25-27 files count once).
    if "leakhound-low" in hits:
        low, default = hits["leakhound-low"], hits.get("leakhound", {})
        misses = [e for e in pos if e["file"] not in low]
        groups = collections.defaultdict(list)
        for e in misses:
            groups[provider(e["peer"], e["rule"])].append(e)
        allp = collections.defaultdict(list)
        for e in pos:
            allp[provider(e["peer"], e["rule"])].append(e)
        order = sorted(groups, key=lambda p: (-wsum(groups[p]), -len(groups[p]), p))
        with open(os.path.join(out, "lh-misses.txt"), "w") as f:
            f.write(f"# leakhound --min-confidence low misses {len(misses)} of {len(pos)} positive "
                    f"files ({wsum(misses):.0f} of {wsum(pos):.0f} one per secret), "
                    f"{len(groups)} providers.\n"
                    f"# Top {args.top} providers by missed secrets (a gitleaks sample-secret call's "
                    f"files count once). Each line: provider: missed secrets/total secrets "
                    f"[missed files/total files];\n# then each source rule the same way and up to 3 "
                    f"missed examples (first 200 chars; the files are under tree/).\n"
                    f"# Found only at low (not at the default confidence): "
                    f"{sum(1 for e in pos if e['file'] in low and e['file'] not in default)} files.\n\n")
            for p in order[:args.top]:
                f.write(f"{p}: {wsum(groups[p]):.0f}/{wsum(allp[p]):.0f} "
                        f"[{len(groups[p])}/{len(allp[p])}]\n")
                by_rule = collections.defaultdict(list)
                for e in groups[p]:
                    by_rule[(e["peer"], e["rule"])].append(e)
                for (peer, rule), es in sorted(by_rule.items(), key=lambda kv: -wsum(kv[1])):
                    f.write(f"  {peer} {rule}: {wsum(es):.0f}/{wsum(rules[(peer, rule)]):.0f} "
                            f"[{len(es)}/{len(rules[(peer, rule)])}]\n")
                    shown = set()
                    for e in es:
                        if len(shown) == 3:
                            break
                        if e.get("group") in shown:
                            continue
                        shown.add(e.get("group") or e["file"])
                        f.write(f"    {e['file']}: {json.dumps(e['text'][:200], ensure_ascii=False)}\n")
            rest = order[args.top:]
            if rest:
                f.write(f"\n# the other {len(rest)} providers (missed secrets/total): "
                        + ", ".join(f"{p} {wsum(groups[p]):.0f}/{wsum(allp[p]):.0f}" for p in rest)
                        + "\n")
        score["leakhound_missed_providers"] = [
            {"provider": p, "missed": round(wsum(groups[p]), 2), "total": round(wsum(allp[p]), 2),
             "missed_files": len(groups[p]), "files": len(allp[p])} for p in order]
        with open(os.path.join(out, "score.json"), "w") as f:
            json.dump(score, f, indent=1)
    if "leakhound" in hits:
        h = hits["leakhound"]
        with open(os.path.join(out, "lh-false-alarms.txt"), "w") as f:
            flagged = [e for e in neg + neg_also if e["file"] in h]
            f.write(f"# negatives leakhound flags at its default confidence: {len(flagged)} "
                    f"(also_positive marked *)\n")
            for e in flagged:
                f.write(f"{'*' if e['also_positive'] else ' '} {e['file']} {e['peer']} {e['rule']} "
                        f"[{', '.join(sorted(set(h[e['file']])))}]: "
                        f"{json.dumps(e['text'][:200], ensure_ascii=False)}\n")


if __name__ == "__main__":
    main()
