#!/usr/bin/env bash
# leakhound next to its peers on the same generated corpus, in one alternating hyperfine run:
# wall-time medians and ratios, then recall on the planted truth and findings beyond it.
#
#   benches/compare.sh                 # ~300 MB tree of source files
#   SIZE_MB=50 RUNS=3 benches/compare.sh
#   MODE=bigfile benches/compare.sh    # one ~1 GiB text file (leakhound, betterleaks; BIG_ALL=1 adds the slow ones)
#
# Corpus and outputs go to $OUT (default /tmp/leakhound-bench); nothing is committed.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MB=${SIZE_MB:-300}
RUNS=${RUNS:-5}
MODE=${MODE:-tree}
OUT=${OUT:-/tmp/leakhound-bench}
PEERS=${PEERS:-../shared/bench/peers.sh}

cargo build --release --quiet
[[ -f $OUT/truth.jsonl ]] || cargo run --release --quiet --example gen-corpus -- "$OUT" "$SIZE_MB"
eval "$("$PEERS")"
LH=target/release/leakhound

if [[ $MODE == bigfile ]]; then
  big=$OUT/big.txt
  if [[ ! -f $big ]]; then
    # The tree's files concatenated (sorted, so the truth can be mapped) until ~1 GiB.
    python3 benches/recall.py concat "$OUT" "$big" $((1 << 30))
  fi
  # gitleaks (~80 s a run here) and Kingfisher (~120 s) only when asked: BIG_ALL=1.
  extra=()
  if [[ ${BIG_ALL:-0} == 1 ]]; then
    extra=(-n gitleaks "$GITLEAKS dir $big --no-banner --exit-code 0 -f json -r $OUT/gl-big.json"
           -n kingfisher "$KINGFISHER scan $big -n --no-update-check -q --no-dedup --max-file-size 0 -f json -o $OUT/kf-big.json")
  fi
  hyperfine -i -w 1 -r "$RUNS" -N --export-json "$OUT/hyperfine-big.json" \
    -n leakhound "$LH scan $big --max-file-size 0 --format json -o $OUT/lh-big.json" \
    -n betterleaks "$BETTERLEAKS $big --no-banner --exit-code 0 -o $OUT/bl-big.json" \
    "${extra[@]}"
  /usr/bin/time -f "leakhound peak RSS: %M KB" "$LH" scan "$big" --max-file-size 0 --format json -o "$OUT/lh-big.json" || true
  /usr/bin/time -f "betterleaks peak RSS: %M KB" "$BETTERLEAKS" "$big" --no-banner --exit-code 0 -o "$OUT/bl-big.json" >"$OUT/bl-big.stdout" || true
  python3 benches/recall.py ratios "$OUT/hyperfine-big.json"
  exit 0
fi

hyperfine -i -w 1 -r "$RUNS" -N --export-json "$OUT/hyperfine.json" \
  -n leakhound "$LH scan $OUT/tree --format json -o $OUT/lh.json" \
  -n kingfisher "$KINGFISHER scan $OUT/tree -n --no-update-check -q --no-dedup -f json -o $OUT/kf.json" \
  -n betterleaks "$BETTERLEAKS $OUT/tree --no-banner --exit-code 0 -o $OUT/bl.json" \
  -n gitleaks "$GITLEAKS dir $OUT/tree --no-banner --exit-code 0 -f json -r $OUT/gl.json"
python3 benches/recall.py ratios "$OUT/hyperfine.json"
python3 benches/recall.py recall "$OUT"
