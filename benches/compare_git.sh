#!/usr/bin/env bash
# History scans side by side: leakhound, Kingfisher, gitleaks and betterleaks on one generated
# repository (gen-repo: COMMITS commits, planted secrets, some deleted later), in one
# alternating hyperfine run; then each tool's recall against the planted truth, counting only
# findings attributed to the commit that introduced the secret. Also times `git --staged` on
# a typical commit (a few changed files) in the same repository.
#
#   benches/compare_git.sh
#   COMMITS=500 RUNS=3 benches/compare_git.sh
#
# `MODE=git benches/compare.sh` times the same history beside a six-pattern ripgrep, under
# the build lock; this script adds recall details and `git --staged`.
# Everything goes to $OUT (default /tmp/leakhound-git-bench); nothing is committed.
set -euo pipefail
cd "$(dirname "$0")/.."
COMMITS=${COMMITS:-2000}
RUNS=${RUNS:-7}
OUT=${OUT:-/tmp/leakhound-git-bench}
PEERS=${PEERS:-../shared/bench/peers.sh}

$(command -v lhcargo || echo cargo) build --release --quiet --bin leakhound --example gen-repo
[[ -f $OUT/truth.jsonl ]] || target/release/examples/gen-repo "$OUT" "$COMMITS"
eval "$("$PEERS")"
LH=$PWD/target/release/leakhound
REPO=$OUT/repo

hyperfine -i -w 1 -r "$RUNS" -N --export-json "$OUT/hyperfine-git.json" \
  -n leakhound "$LH git $REPO --format jsonl --show-secrets -o $OUT/lh.jsonl" \
  -n kingfisher "$KINGFISHER scan $REPO -n --no-update-check -q --no-dedup --git-history full -f json -o $OUT/kf.json" \
  -n betterleaks "$BETTERLEAKS git $REPO --no-banner --exit-code 0 -o $OUT/bl.json" \
  -n gitleaks "$GITLEAKS git $REPO --no-banner --exit-code 0 -f json -r $OUT/gl.json"
python3 benches/recall.py ratios "$OUT/hyperfine-git.json"
python3 benches/recall_git.py "$OUT/truth.jsonl" leakhound="$OUT/lh.jsonl" \
  kingfisher="$OUT/kf.json" betterleaks="$OUT/bl.json" gitleaks="$OUT/gl.json"

# A typical commit for the pre-commit hook: three edited files and one new one, staged.
(
  cd "$REPO"
  git reset -q --hard main
  for f in $(git ls-files | head -3); do echo "changed = 1" >>"$f"; done
  printf 'def f():\n    return 1\n' >new_module.py
  git add -A
)
hyperfine -w 3 -r 30 -N -i --export-json "$OUT/hyperfine-staged.json" \
  -n "leakhound git --staged" "$LH git $REPO --staged" \
  -n "gitleaks git --staged" "$GITLEAKS git $REPO --staged --no-banner --exit-code 0" \
  -n "betterleaks git --staged" "$BETTERLEAKS git $REPO --staged --no-banner --exit-code 0"
(cd "$REPO" && git reset -q --hard main && rm -f new_module.py)
