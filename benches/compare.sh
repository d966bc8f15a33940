#!/usr/bin/env bash
# leakhound next to its peers and a six-pattern ripgrep, in one command: the generated tree,
# one ~1 GiB file and a generated git history, each an alternating hyperfine run (medians and
# ratios), then recall on the planted truth; and, with MODE=realcode (or all, where it is
# built), the real-code tree of benches/realcode: third-party sources nobody here wrote. Every
# timed stretch holds the machine's build lock (/tmp/cargo.lock), so no build runs beside it;
# builds happen before, outside it.
#
#   benches/compare.sh                          # tree, bigfile, git (and realcode if built)
#   MODE=tree|bigfile|git|realcode benches/compare.sh    # one of them
#   REALCODE=/tmp/leakhound-realcode ...   where benches/realcode/build.sh put that tree
#   SIZE_MB=50 RUNS=3 WARMUP=0 LH=/tmp/lh-copy benches/compare.sh
#   LH_OLD=/tmp/lh-main ...   also times that build, as leakhound-before
#   BIG_ALL=1 ...   adds gitleaks (~80 s a run) and Kingfisher (~120 s) on the big file
#
# ripgrep runs the six patterns of issue 31 (AWS key id, GitHub token, Slack token, `sk-`
# key, PEM private key header, Google API key): what a literal-prefiltered search over the
# same bytes costs, the floor to compare with. On history it reads `git log -p --all`.
# LH: the leakhound binary to time (default: built here with `lhcargo`, or `cargo` where
# there is no lock wrapper). Corpus and outputs go to $OUT (default
# /tmp/leakhound-bench); nothing is committed.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MB=${SIZE_MB:-300}
RUNS=${RUNS:-5}
WARMUP=${WARMUP:-1}
MODE=${MODE:-all}
OUT=${OUT:-/tmp/leakhound-bench}
PEERS=${PEERS:-../shared/bench/peers.sh}
LOCK=${LOCK:-/tmp/cargo.lock}
CARGO=$(command -v lhcargo || echo cargo)

if [[ -z ${LH:-} ]]; then
  $CARGO build --release --locked --quiet --bin leakhound --example gen-corpus --example gen-repo
  LH=${CARGO_TARGET_DIR:-target}/release/leakhound
fi
EXAMPLES=${CARGO_TARGET_DIR:-target}/release/examples
eval "$("$PEERS")"
RG=${RG:-rg}
SIX="-e 'AKIA[0-9A-Z]{16}' -e 'ghp_[A-Za-z0-9]{36}' -e 'xox[bp]-[0-9A-Za-z-]{10,}' -e 'sk-[A-Za-z0-9]{20,}' -e '-----BEGIN[A-Z\\x20]*PRIVATE\\x20KEY' -e 'AIza[0-9A-Za-z_-]{35}'"
locked() { flock "$LOCK" "$@"; }

big=$OUT/big.txt GIT_OUT=$OUT/git
REPO=$GIT_OUT/repo
REALCODE=${REALCODE:-/tmp/leakhound-realcode}
old_tree=() old_big=() old_git=() old_real=()
if [[ -n ${LH_OLD:-} ]]; then
  old_tree=(-n leakhound-before "$LH_OLD scan $OUT/tree --format json -o $OUT/lh-before.json")
  old_real=(-n leakhound-before "$LH_OLD scan $REALCODE/tree --format json -o $OUT/lh-real-before.json")
  old_big=(-n leakhound-before "$LH_OLD scan $big --max-file-size 0 --format json -o $OUT/lh-big-before.json")
  old_git=(-n leakhound-before "$LH_OLD git $REPO --format jsonl --show-secrets -o $GIT_OUT/lh-before.jsonl")
fi
echo "leakhound: $LH ($("$LH" --version)); $(date -u '+%F %H:%M UTC'); commit $(git rev-parse --short HEAD)"

[[ -f $OUT/truth.jsonl ]] || "$EXAMPLES/gen-corpus" "$OUT" "$SIZE_MB"

if [[ $MODE == all || $MODE == tree ]]; then
  echo "== tree: $OUT/tree"
  locked hyperfine -i -w "$WARMUP" -r "$RUNS" -N --export-json "$OUT/hyperfine.json" \
    -n leakhound "$LH scan $OUT/tree --format json -o $OUT/lh.json" \
    "${old_tree[@]}" \
    -n kingfisher "$KINGFISHER scan $OUT/tree -n --no-update-check -q --no-dedup -f json -o $OUT/kf.json" \
    -n betterleaks "$BETTERLEAKS $OUT/tree --no-banner --exit-code 0 -o $OUT/bl.json" \
    -n gitleaks "$GITLEAKS dir $OUT/tree --no-banner --exit-code 0 -f json -r $OUT/gl.json" \
    -n ripgrep-six "$RG -c $SIX $OUT/tree"
  python3 benches/recall.py ratios "$OUT/hyperfine.json"
  python3 benches/recall.py recall "$OUT"
fi

if [[ $MODE == all || $MODE == bigfile ]]; then
  # The tree's files concatenated (sorted, so the truth can be mapped) until ~1 GiB.
  [[ -f $big ]] || python3 benches/recall.py concat "$OUT" "$big" $((1 << 30))
  echo "== one file: $big ($(stat -c %s "$big") bytes)"
  extra=()
  if [[ ${BIG_ALL:-0} == 1 ]]; then
    extra=(-n gitleaks "$GITLEAKS dir $big --no-banner --exit-code 0 -f json -r $OUT/gl-big.json"
           -n kingfisher "$KINGFISHER scan $big -n --no-update-check -q --no-dedup --max-file-size 0 -f json -o $OUT/kf-big.json")
  fi
  locked hyperfine -i -w "$WARMUP" -r "$RUNS" -N --export-json "$OUT/hyperfine-big.json" \
    -n leakhound "$LH scan $big --max-file-size 0 --format json -o $OUT/lh-big.json" \
    "${old_big[@]}" \
    -n betterleaks "$BETTERLEAKS $big --no-banner --exit-code 0 -o $OUT/bl-big.json" \
    -n ripgrep-six "$RG -c $SIX $big" \
    "${extra[@]}"
  python3 benches/recall.py ratios "$OUT/hyperfine-big.json"
  locked bash -c "
    /usr/bin/time -f 'leakhound: %e s wall, %U s user, peak RSS %M KB' '$LH' scan '$big' --max-file-size 0 --format json -o '$OUT/lh-big.json' || true
    /usr/bin/time -f 'betterleaks: %e s wall, %U s user, peak RSS %M KB' '$BETTERLEAKS' '$big' --no-banner --exit-code 0 -o '$OUT/bl-big.json' >'$OUT/bl-big.stdout' || true
    /usr/bin/time -f 'ripgrep-six: %e s wall, %U s user, peak RSS %M KB' $RG -c $SIX '$big' >'$OUT/rg-big.count' || true"
fi

if [[ $MODE == all || $MODE == git ]]; then
  [[ -f $GIT_OUT/truth.jsonl ]] || "$EXAMPLES/gen-repo" "$GIT_OUT" "${COMMITS:-2000}"
  echo "== git history: $REPO ($(git -C "$REPO" rev-list --count --all) commits)"
  locked hyperfine -i -w "$WARMUP" -r "$RUNS" --export-json "$OUT/hyperfine-git.json" \
    -n leakhound "$LH git $REPO --format jsonl --show-secrets -o $GIT_OUT/lh.jsonl" \
    "${old_git[@]}" \
    -n kingfisher "$KINGFISHER scan $REPO -n --no-update-check -q --no-dedup --git-history full -f json -o $GIT_OUT/kf.json" \
    -n betterleaks "$BETTERLEAKS git $REPO --no-banner --exit-code 0 -o $GIT_OUT/bl.json" \
    -n gitleaks "$GITLEAKS git $REPO --no-banner --exit-code 0 -f json -r $GIT_OUT/gl.json" \
    -n ripgrep-six "git -C $REPO log -p --all --no-color | $RG -c $SIX"
  python3 benches/recall.py ratios "$OUT/hyperfine-git.json"
  python3 benches/recall_git.py "$GIT_OUT/truth.jsonl" leakhound="$GIT_OUT/lh.jsonl" \
    kingfisher="$GIT_OUT/kf.json" betterleaks="$GIT_OUT/bl.json" gitleaks="$GIT_OUT/gl.json"
fi

# Real code: the tree is built apart (benches/realcode/build.sh downloads its sources), so
# `all` times it only where it is already there. ripgrep is given --hidden, as leakhound reads
# hidden files (.env, .npmrc) too; both leave out what ignore files and binary files leave.
if [[ $MODE == realcode || ($MODE == all && -d $REALCODE/tree) ]]; then
  [[ -d $REALCODE/tree ]] || { echo "no real-code tree in $REALCODE: run benches/realcode/build.sh" >&2; exit 2; }
  echo "== real code: $REALCODE/tree ($(du -sh "$REALCODE/tree" | cut -f1))"
  locked hyperfine -i -w "$WARMUP" -r "$RUNS" -N --export-json "$OUT/hyperfine-real.json" \
    -n leakhound "$LH scan $REALCODE/tree --format json -o $OUT/lh-real.json" \
    "${old_real[@]}" \
    -n kingfisher "$KINGFISHER scan $REALCODE/tree -n --no-update-check -q --no-dedup -f json -o $OUT/kf-real.json" \
    -n betterleaks "$BETTERLEAKS $REALCODE/tree --no-banner --exit-code 0 -o $OUT/bl-real.json" \
    -n gitleaks "$GITLEAKS dir $REALCODE/tree --no-banner --exit-code 0 -f json -r $OUT/gl-real.json" \
    -n ripgrep-six "$RG --hidden -c $SIX $REALCODE/tree"
  python3 benches/recall.py ratios "$OUT/hyperfine-real.json"
fi
