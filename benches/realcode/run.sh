#!/usr/bin/env bash
# Run leakhound and its peers on the real-code tree (built by build.sh), one after another in the
# same run, each writing a JSON report to $OUT, then score them against the planted truth.
#
#   benches/realcode/run.sh
#   LH=/path/to/leakhound DS=1 benches/realcode/run.sh
#
#   OUT    the folder build.sh filled (default /tmp/leakhound-realcode); reports go there too
#   LH     the leakhound binary (default /work/main/target/release/leakhound)
#   PEERS  the script that installs the peers (default ../shared/bench/peers.sh beside the repo)
#   DS=1   also run detect-secrets (slow: still running after 30 minutes on this tree)
#
# Each tool runs once, without validation (no network), and its wall time is quoted as rough.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
OUT=${OUT:-/tmp/leakhound-realcode}
TREE=$OUT/tree
LH=${LH:-/work/main/target/release/leakhound}
PEERS=${PEERS:-$repo/../shared/bench/peers.sh}
[[ -f $OUT/truth.jsonl && -d $TREE ]] || { echo "no tree in $OUT: run build.sh first" >&2; exit 2; }
[[ -x $LH ]] || { echo "no leakhound binary at $LH (set LH=...)" >&2; exit 2; }
[[ -f $PEERS ]] || { echo "no peers script at $PEERS (set PEERS=...)" >&2; exit 2; }
LH=$(realpath "$LH")  # the tools run from $OUT
eval "$(bash "$PEERS")"

cd "$OUT"
rm -f times.tsv lh.json kf.json bl.json gl.json ds.json
timed() {  # timed NAME COMMAND...: run once, append "NAME<TAB>seconds<TAB>exit code" to times.tsv
  local name=$1 t0 t1 rc=0; shift
  echo "== $name" >&2
  t0=$(date +%s.%N)
  "$@" || rc=$?
  t1=$(date +%s.%N)
  printf '%s\t%.2f\t%d\n' "$name" "$(awk "BEGIN{print $t1 - $t0}")" "$rc" >>times.tsv
}

# Exit codes: leakhound 1 = findings; the others are told to exit 0.
timed leakhound "$LH" scan tree --format json --show-secrets -o lh.json
timed Kingfisher "$KINGFISHER" scan tree -n --no-update-check -q --no-dedup -f json -o kf.json
timed betterleaks "$BETTERLEAKS" tree --no-banner --exit-code 0 -o bl.json >bl.stdout 2>bl.stderr
timed gitleaks "$GITLEAKS" dir tree --no-banner --exit-code 0 -f json -r gl.json 2>gl.stderr
if [[ ${DS:-0} == 1 ]]; then
  timed detect-secrets sh -c "'$DETECT_SECRETS' scan --all-files tree >ds.json"
fi
cat times.tsv >&2
python3 "$here/score.py" "$OUT" | tee score.txt
