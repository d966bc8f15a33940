#!/usr/bin/env bash
# Recall and false alarms on the peers' own published rule examples (issue 13): every positive
# and negative example string from gitleaks' rule generators, Kingfisher's and Nosey Parker's rule
# files and detect-secrets' detector tests, one file each; then leakhound (at its default
# confidence and at --min-confidence low), Kingfisher, betterleaks and gitleaks scan the tree, one
# after another, each writing a JSON report to $OUT, and score.py counts per example file.
#
#   benches/peer-examples/run.sh
#   LH=/path/to/leakhound OUT=/tmp/somewhere benches/peer-examples/run.sh
#
#   OUT       work folder (default /tmp/leakhound-peer-examples): tree/, index.jsonl, reports,
#             score.txt, score.json, lh-misses.txt, lh-false-alarms.txt
#   LH        the leakhound binary (default /work/main/target/release/leakhound)
#   PEERS     the script that installs the peers (default ../shared/bench/peers.sh beside the repo)
#   EXAMPLES  the example set (default ../shared/bench/peer-examples/examples.jsonl beside the
#             repository: data from the peers' snapshots is kept outside it; REGEN=1 rebuilds it)
#   REGEN=1   first rebuild the example set from the peers' git snapshots at the commits in
#             pins.txt (extract.py; MIRROR=folder of owner+name/repo git dirs, default
#             /work/.mirror) into $OUT/examples.jsonl and use that
#
# Each tool runs once, without validation (no network); wall times are rough. An example counts
# as found / flagged when the tool reports any finding in its file.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
OUT=${OUT:-/tmp/leakhound-peer-examples}
LH=${LH:-/work/main/target/release/leakhound}
PEERS=${PEERS:-$repo/../shared/bench/peers.sh}
EXAMPLES=${EXAMPLES:-$here/../../../shared/bench/peer-examples/examples.jsonl}
[[ -x $LH ]] || { echo "no leakhound binary at $LH (set LH=...)" >&2; exit 2; }
[[ -f $PEERS ]] || { echo "no peers script at $PEERS (set PEERS=...)" >&2; exit 2; }
LH=$(realpath "$LH")  # the tools run from $OUT
mkdir -p "$OUT"
if [[ ${REGEN:-0} == 1 ]]; then
  python3 "$here/extract.py" --mirror "${MIRROR:-/work/.mirror}" --pins "$here/pins.txt" \
    -o "$OUT/examples.jsonl"
  EXAMPLES=$OUT/examples.jsonl
fi
[[ -f $EXAMPLES ]] || { echo "no example set at $EXAMPLES (run with REGEN=1)" >&2; exit 2; }
EXAMPLES=$(realpath "$EXAMPLES")
eval "$(bash "$PEERS")"

cd "$OUT"
python3 "$here/mktree.py" "$EXAMPLES" .
rm -f times.tsv lh.json lh-low.json kf.json bl.json gl.json
timed() {  # timed NAME COMMAND...: run once, append "NAME<TAB>seconds<TAB>exit code" to times.tsv
  local name=$1 t0 t1 rc=0; shift
  echo "== $name" >&2
  t0=$(date +%s.%N)
  "$@" || rc=$?
  t1=$(date +%s.%N)
  printf '%s\t%.2f\t%d\n' "$name" "$(awk "BEGIN{print $t1 - $t0}")" "$rc" >>times.tsv
}

# Exit codes: leakhound 1 and Kingfisher 200 = findings; betterleaks and gitleaks are told to
# exit 0.
timed leakhound "$LH" scan tree --format json -o lh.json
timed leakhound-low "$LH" scan tree --format json --min-confidence low -o lh-low.json
timed Kingfisher "$KINGFISHER" scan tree -n --no-update-check -q --no-dedup -f json -o kf.json
timed betterleaks "$BETTERLEAKS" tree --no-banner --exit-code 0 -o bl.json >bl.stdout 2>bl.stderr
timed gitleaks "$GITLEAKS" dir tree --no-banner --exit-code 0 -f json -r gl.json 2>gl.stderr
cat times.tsv >&2
python3 "$here/score.py" "$OUT"
echo "misses: $OUT/lh-misses.txt  false alarms: $OUT/lh-false-alarms.txt" >&2
