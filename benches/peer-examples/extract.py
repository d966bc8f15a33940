#!/usr/bin/env python3
"""Take every positive and negative example out of the peers' rule sources.

    extract.py [--mirror DIR] [--pins pins.txt] [--write-pins] [-o examples.jsonl]

Reads git snapshots of the peers' repositories (bare git directories, read with `git show` and
`git ls-tree`, never checked out or built):

  gitleaks       cmd/generate/config/rules/*.go: the `tps` / `fps` handed to utils.Validate and
                 utils.ValidateWithPaths in every rule listed in cmd/generate/config/main.go,
                 evaluated by goeval.py (gitleaks' own helpers GenerateSampleSecrets, Hex, ... are
                 evaluated from its source; secrets.NewSecret is re-implemented with a fixed seed
                 per rule).
  Kingfisher     data/rules/*.yml / *.yaml: each rule's `examples` and `negative_examples`.
  Nosey Parker   crates/noseyparker/data/default/builtin/rules/*.yml: the same two fields.
  detect-secrets tests/plugins/*_test.py: the pytest parameter lists of the per-detector tests,
                 labelled by their `should_flag` column (or all positive where the test asserts a
                 finding for every row). Left out: keyword_test.py and high_entropy_strings_test.py
                 (whether a row should be flagged depends on the file type or entropy settings
                 the test sets, not on the string) and ip_public_test.py (public IP addresses are
                 not credentials).

Writes one JSON object per line: {"peer", "rule", "kind": "positive"|"negative", "text",
"file", "form", ["path"], ["also_positive"]}. The first line is {"meta": {...}} with the commit
of every repository, the counts, and every example that could not be evaluated (skipped).

  form           literal: written out in the rule source; template: a literal secret put into
                 gitleaks' GenerateSampleSecret(s) templates (27 assignment syntaxes per call);
                 generated-template: the same with a secret from secrets.NewSecret; generated:
                 other text holding NewSecret output (an example counts as generated when it
                 changes with the seed).
  group          on template examples: the GenerateSampleSecret(s) call that made it (one
                 secret, up to 27 syntaxes); score.py can weigh a group as one example.
  path           the file path a gitleaks ValidateWithPaths example is checked under.
  also_positive  on a negative whose exact text is also some peer's positive (e.g. one
                 Cloudflare rule's false positives are another's true positives); score.py leaves
                 these out of the false-alarm count.
Exact duplicates (same peer, kind and text) are written once.
"""
import argparse
import ast
import collections
import json
import os
import re
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import goeval  # noqa: E402

REPOS = {
    "gitleaks": "gitleaks/gitleaks",
    "kingfisher": "mongodb/kingfisher",
    "noseyparker": "praetorian-inc/noseyparker",
    "detect-secrets": "Yelp/detect-secrets",
}
GL = "github.com/zricethezav/gitleaks/v8/cmd/generate/config"


class Repo:
    def __init__(self, gitdir, commit):
        self.gitdir, self.commit = gitdir, commit

    def git(self, *args):
        return subprocess.run(["git", "--git-dir", self.gitdir, *args], check=True,
                              capture_output=True).stdout

    def show(self, path):
        return self.git("show", f"{self.commit}:{path}").decode("utf-8", "replace")

    def ls(self, folder):
        out = self.git("ls-tree", "-r", "--name-only", self.commit, folder.rstrip("/") + "/")
        return sorted(out.decode().split("\n")[:-1])


# --------------------------------------------------------------------------- gitleaks

def gitleaks(repo, out, skipped, seed_suffix=""):
    interp = goeval.Interp()
    base = "cmd/generate/config/"
    interp.load(GL + "/utils", [repo.show(base + "utils/generate.go"),
                                repo.show(base + "utils/patterns.go")])
    files = [p for p in repo.ls(base + "rules") if p.endswith(".go") and not p.endswith("_test.go")]
    interp.load(GL + "/rules", [repo.show(p) for p in files])
    funcfile = {}
    for p in files:
        for m in re.finditer(r"^func (\w+)\(", repo.show(p), re.M):
            funcfile[m.group(1)] = p

    def contains_stop_word(allow, s):
        s = s.lower()
        for w in allow.get("StopWords") or []:
            if w in s:
                return True, w
        return False, ""
    interp.methods[("config.Allowlist", "ContainsStopWord")] = contains_stop_word

    current = {}
    templated = {}  # text -> the GenerateSampleSecret(s) call that made it
    for name in ("GenerateSampleSecrets", "GenerateSampleSecret"):
        fn = interp.packages[GL + "/utils"].vars[name]

        def wrapped(*args, _fn=fn):
            v = interp.invoke(_fn, list(args))
            current["calls"] = current.get("calls", 0) + 1
            for text in [v] if isinstance(v, str) else v:
                templated.setdefault(text, f"{current['func']}#{current['calls']}")
            return v
        interp.hooks[GL + "/utils." + name] = wrapped

    def record(rule, tps, fps, paths):
        rid = rule.get("RuleID") if isinstance(rule, goeval.Struct) else None
        rid = rid or current["func"]
        for kind, coll in (("positive", tps), ("negative", fps)):
            if coll is None:
                continue
            items = coll.items() if isinstance(coll, dict) else ((None, v) for v in coll)
            if isinstance(coll, goeval.Skip):
                items = [(None, coll)]
            for path, text in items:
                if isinstance(text, goeval.Skip) or isinstance(path, goeval.Skip):
                    skipped.append({"peer": "gitleaks", "rule": rid, "kind": kind,
                                    "file": current["file"], "reason": str(text.reason)})
                    continue
                ex = {"peer": "gitleaks", "rule": rid, "kind": kind, "text": text,
                      "file": current["file"], "form": "template" if text in templated else "literal"}
                if text in templated:
                    ex["group"] = templated[text]
                if paths:
                    ex["path"] = path
                out.append(ex)
        return rule

    interp.hooks[GL + "/utils.Validate"] = lambda r, t, f: record(r, t, f, False)
    interp.hooks[GL + "/utils.ValidateWithPaths"] = lambda r, t, f: record(r, t, f, True)

    order = re.findall(r"\brules\.(\w+)\(\)", repo.show(base + "main.go"))
    renv = interp.packages[GL + "/rules"]
    for fname in dict.fromkeys(order):
        current.update(func=fname, file=funcfile.get(fname, "?"), calls=0)
        interp.rng.seed(f"gitleaks:{fname}{seed_suffix}")
        try:
            interp.invoke(renv.vars[fname], [])
        except (goeval.GoError, KeyError, TypeError, IndexError, AttributeError) as e:
            skipped.append({"peer": "gitleaks", "rule": fname, "kind": "rule",
                            "file": current["file"], "reason": f"{type(e).__name__}: {e}"})
    return order


def gitleaks_examples(repo, skipped):
    """Evaluate twice with different seeds: an example that changes is 'generated'."""
    a, b, junk = [], [], []
    gitleaks(repo, a, skipped)
    gitleaks(repo, b, junk, seed_suffix=":second")
    stable = collections.Counter((e["rule"], e["kind"], e["text"]) for e in b)
    for e in a:
        if stable[(e["rule"], e["kind"], e["text"])] == 0:
            e["form"] = "generated-template" if e["form"] == "template" else "generated"
    return a


# --------------------------------------------------------------------------- YAML rule files

def yaml_rules(repo, peer, folder, skipped):
    out = []
    for path in repo.ls(folder):
        if not path.endswith((".yml", ".yaml")):
            continue
        try:
            doc = yaml.safe_load(repo.show(path))
        except yaml.YAMLError as e:
            skipped.append({"peer": peer, "rule": "?", "kind": "file", "file": path,
                            "reason": f"YAML: {e}"})
            continue
        for rule in (doc or {}).get("rules") or []:
            for kind, field in (("positive", "examples"), ("negative", "negative_examples")):
                for text in rule.get(field) or []:
                    if not isinstance(text, str):
                        skipped.append({"peer": peer, "rule": rule.get("id"), "kind": kind,
                                        "file": path, "reason": f"not a string: {type(text).__name__}"})
                        continue
                    out.append({"peer": peer, "rule": rule.get("id"), "kind": kind, "text": text,
                                "file": path, "form": "literal"})
    return out


# --------------------------------------------------------------------------- detect-secrets

DS_LEFT_OUT = {"keyword_test.py", "high_entropy_strings_test.py", "ip_public_test.py",
               "base_test.py"}
DS_TEXT_ARGS = ("payload", "line", "file_content")


class PyEval:
    """Literal evaluation plus names bound at module level, `+`, and str.format."""

    def __init__(self, module):
        self.names = {}
        for node in module.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                    node.targets[0], ast.Name):
                try:
                    self.names[node.targets[0].id] = self.eval(node.value)
                except ValueError:
                    pass

    def eval(self, n):
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, (ast.Tuple, ast.List)):
            return [self.eval(x) for x in n.elts]
        if isinstance(n, ast.Name) and n.id in self.names:
            return self.names[n.id]
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add):
            return self.eval(n.left) + self.eval(n.right)
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod):
            return self.eval(n.left) % tuple(self.eval(n.right)) if isinstance(
                n.right, ast.Tuple) else self.eval(n.left) % self.eval(n.right)
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Slice):
            v = self.eval(n.value)
            lo = self.eval(n.slice.lower) if n.slice.lower else None
            hi = self.eval(n.slice.upper) if n.slice.upper else None
            return v[lo:hi]
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
            return self.eval(n.left) * self.eval(n.right)
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and n.func.attr == "format"):
            return self.eval(n.func.value).format(*[self.eval(a) for a in n.args],
                                                  **{k.arg: self.eval(k.value) for k in n.keywords})
        raise ValueError(ast.dump(n)[:120])


def detect_secrets(repo, skipped):
    out = []
    for path in repo.ls("tests/plugins"):
        base = os.path.basename(path)
        if not base.endswith("_test.py") or base in DS_LEFT_OUT:
            continue
        module = ast.parse(repo.show(path))
        ev = PyEval(module)
        plugin = base[:-len("_test.py")]
        for fn in ast.walk(module):
            if not isinstance(fn, ast.FunctionDef):
                continue
            for dec in fn.decorator_list:
                if not (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute)
                        and dec.func.attr == "parametrize"):
                    continue
                names = [s.strip() for s in ev.eval(dec.args[0]).split(",")]
                text_args = [i for i, nm in enumerate(names) if nm in DS_TEXT_ARGS]
                if not text_args:
                    continue
                ti = text_args[0]
                flag = names.index("should_flag") if "should_flag" in names else None
                if flag is None and len(names) != 1:
                    continue
                rows = dec.args[1].elts if isinstance(dec.args[1], (ast.List, ast.Tuple)) else []
                for row in rows:
                    try:
                        vals = ev.eval(row)
                    except ValueError as e:
                        skipped.append({"peer": "detect-secrets", "rule": f"{plugin}.{fn.name}",
                                        "kind": "?", "file": path, "reason": str(e)})
                        continue
                    if len(names) == 1:
                        vals = vals[0] if isinstance(vals, list) and len(vals) == 1 else vals
                        text, positive = vals, True
                    else:
                        text, positive = vals[ti], bool(vals[flag])
                    out.append({"peer": "detect-secrets", "rule": f"{plugin}.{fn.name}",
                                "kind": "positive" if positive else "negative", "text": text,
                                "file": path, "form": "literal"})
    return out


# --------------------------------------------------------------------------- main

def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", default="/work/.mirror",
                    help="folder holding owner+name/repo git directories")
    ap.add_argument("--pins", default=os.path.join(here, "pins.txt"),
                    help="repo commit lines to read (default: pins.txt beside this script)")
    ap.add_argument("--write-pins", action="store_true",
                    help="use each snapshot's HEAD and write it to --pins")
    ap.add_argument("-o", "--output", default=os.path.join(here, "examples.jsonl"))
    args = ap.parse_args()

    pins = {}
    if not args.write_pins and os.path.exists(args.pins):
        for line in open(args.pins):
            if line.strip() and not line.startswith("#"):
                repo, commit = line.split()[:2]
                pins[repo] = commit
    repos = {}
    for peer, name in REPOS.items():
        gitdir = os.path.join(args.mirror, name.replace("/", "+"), "repo")
        commit = pins.get(name) or subprocess.run(
            ["git", "--git-dir", gitdir, "rev-parse", "HEAD"], check=True,
            capture_output=True, text=True).stdout.strip()
        repos[peer] = Repo(gitdir, commit)
    if args.write_pins:
        with open(args.pins, "w") as f:
            f.write("# peer repository and the commit extract.py reads (git snapshots, not built)\n")
            for peer, name in REPOS.items():
                r = repos[peer]
                date = r.git("log", "-1", "--format=%cs", r.commit).decode().strip()
                f.write(f"{name} {r.commit} {date}\n")

    skipped = []
    examples = []
    examples += gitleaks_examples(repos["gitleaks"], skipped)
    examples += yaml_rules(repos["kingfisher"], "kingfisher", "data/rules", skipped)
    examples += yaml_rules(repos["noseyparker"], "noseyparker",
                           "crates/noseyparker/data/default/builtin/rules", skipped)
    examples += detect_secrets(repos["detect-secrets"], skipped)

    seen, unique, dups = set(), [], collections.Counter()
    for e in examples:
        key = (e["peer"], e["kind"], e["text"], e.get("path"))
        if key in seen:
            dups[e["peer"]] += 1
            continue
        seen.add(key)
        unique.append(e)
    positives = {e["text"] for e in unique if e["kind"] == "positive"}
    for e in unique:
        if e["kind"] == "negative" and e["text"] in positives:
            e["also_positive"] = True

    counts = collections.defaultdict(collections.Counter)
    for e in unique:
        counts[e["peer"]][e["kind"]] += 1
        counts[e["peer"]]["form:" + e["form"]] += 1
        if e.get("also_positive"):
            counts[e["peer"]]["negative_also_positive"] += 1
    meta = {
        "pins": {REPOS[p]: r.commit for p, r in repos.items()},
        "counts": {p: dict(c) for p, c in counts.items()},
        "duplicates_dropped": dict(dups),
        "skipped": skipped,
    }
    with open(args.output, "w") as f:
        f.write(json.dumps({"meta": meta}, ensure_ascii=False) + "\n")
        for e in unique:
            f.write(json.dumps(e, ensure_ascii=False) + "\n")
    for p, c in counts.items():
        print(f"{p:15} {c['positive']:5} positive {c['negative']:5} negative  "
              + " ".join(f"{k}={v}" for k, v in sorted(c.items()) if ":" in k or "also" in k),
              file=sys.stderr)
    print(f"skipped {len(skipped)}; duplicates dropped {dict(dups)}; wrote {args.output}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
