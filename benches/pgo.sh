#!/usr/bin/env bash
# A profile-guided release build (RESULTS.md part AI measured it against the plain release
# build): an instrumented build scans the training PATHs and filters their files once, the
# profiles are merged, and the binary is built again with them, fat LTO and one codegen
# unit. Prints the binary's path. Needs `llvm-profdata` of rustc's own LLVM major version
# (Debian: `apt-get install llvm-NN`, NN from `rustc -vV`).
#
#     benches/pgo.sh TRAINING_PATH...
#
# e.g. benches/pgo.sh /tmp/leakhound-realcode/tree
# Train on inputs other than the ones the binary is then timed on, so that a measurement
# does not reward a profile of its own input.
set -euo pipefail
[ $# -ge 1 ] || { sed -n 2,12p "$0" >&2; exit 2; }
cd "$(dirname "$0")/.."
major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
profdata=/usr/lib/llvm-$major/bin/llvm-profdata
[ -x "$profdata" ] || { echo "benches/pgo.sh: no $profdata (apt-get install llvm-$major)" >&2; exit 2; }
work=${PGO_WORK:-target/pgo}
rm -rf "$work/raw"
mkdir -p "$work/raw"
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 CARGO_PROFILE_RELEASE_LTO=fat
RUSTFLAGS="-Cprofile-generate=$PWD/$work/raw" \
  cargo build --release --locked --target-dir "$work/gen" >&2
gen=$work/gen/release/leakhound
for p in "$@"; do
  # Exit 1 is "findings": what a training scan is expected to end in.
  "$gen" scan --format json -o "$work/train.json" "$p" || [ $? -eq 1 ]
  "$gen" scan --min-confidence low --format json -o "$work/train.json" "$p" || [ $? -eq 1 ]
  find "$p" -type f -size -200k -print0 | xargs -0 cat | "$gen" filter >/dev/null
done
benches/hook-latency.sh "$gen" 10 >&2
"$profdata" merge -o "$work/leakhound.profdata" "$work/raw"
RUSTFLAGS="-Cprofile-use=$PWD/$work/leakhound.profdata" \
  cargo build --release --locked --target-dir "$work/use" >&2
echo "$work/use/release/leakhound"
