#!/usr/bin/env bash
# leakhound on Samsung's CredData, as rebuilt offline by ../shared/bench/creddata/build.sh:
# scans OUT/data at the default confidence and at --min-confidence low (SARIF), then scores both
# reports with the shared score.py (precision / recall / F1 by line, modes (a) labelled and
# (b) all, recall per category, the rules behind false positives, the categories missed).
#
#   benches/creddata.sh OUT [BINARY] [REPORTS]
#     OUT      the built dataset (holds data/ and meta/), e.g. /work/creddata-out
#     BINARY   leakhound binary (default target/release/leakhound; better a copy, as a rebuild
#              may replace it mid-run)
#     REPORTS  where reports and scores go (default ${TMPDIR:-/tmp}/leakhound-creddata); keep it
#              outside the repository: the dataset holds once-leaked credentials (obfuscated)
#   Extra score.py options pass through SCORE_ARGS, e.g. SCORE_ARGS="--x ignore" or
#   SCORE_ARGS="--skip-repos ID"; SCORE=path/to/score.py overrides where score.py is found.
#
# Prints the score table; writes REPORTS/{lh-default.sarif,lh-low.sarif,score.txt,score.json}.
# To add the peers, scan OUT/data with them as ../shared/bench/creddata/README.md says and give
# their reports to score.py next to these two.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: benches/creddata.sh OUT [BINARY] [REPORTS]}
bin=${2:-$here/../target/release/leakhound}
reports=${3:-${TMPDIR:-/tmp}/leakhound-creddata}
score=${SCORE:-$here/../../shared/bench/creddata/score.py}

[[ -d $out/data && -d $out/meta ]] || { echo "$out: no data/ and meta/ (build it with build.sh)" >&2; exit 1; }
[[ -x $bin ]] || { echo "$bin: no such binary" >&2; exit 1; }
[[ -f $score ]] || { echo "$score: score.py not found (set SCORE)" >&2; exit 1; }
out=$(cd "$out" && pwd)
reports=$(realpath -m "$reports")
case $reports/ in
  "$(cd "$here/.." && pwd)"/*) echo "$reports: inside the repository; choose a folder outside it" >&2; exit 1 ;;
esac
mkdir -p "$reports"

echo "# $("$bin" --version)" >&2
t0=$(date +%s.%N)
"$bin" scan "$out/data" --fail-on none --format sarif -o "$reports/lh-default.sarif"
t1=$(date +%s.%N)
"$bin" scan "$out/data" --min-confidence low --fail-on none --format sarif -o "$reports/lh-low.sarif"
t2=$(date +%s.%N)
printf '# scan time: default %.1f s, low %.1f s\n' "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)" >&2

# shellcheck disable=SC2086  # SCORE_ARGS is a list of options
python3 "$score" "$out" "lh-default=$reports/lh-default.sarif" "lh-low=$reports/lh-low.sarif" \
  --json "$reports/score.json" ${SCORE_ARGS:-} | tee "$reports/score.txt"
