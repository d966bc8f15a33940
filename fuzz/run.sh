#!/usr/bin/env bash
# Fuzz every target (or the ones named) for SECONDS each, one at a time:
#   fuzz/run.sh [SECONDS] [TARGET...]        (default 30 s; FUZZ_SECONDS also sets it)
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz --locked`); without
# them it says so and exits 0, since stable `cargo test` already replays the corpus
# (tests/it/fuzz_replay.rs). A crash fails the run: libFuzzer leaves the input under
# fuzz/artifacts/<target>/; fix the bug and add the input to fuzz/corpus/<target>/.
#
# The build is held under `flock /tmp/cargo.lock` (shared with other builds on the machine),
# the fuzzing itself is not; it runs at nice 19 in one process per target, in fuzz/target.
#
# Fuzzing is a CI job of its own, not part of .ci/run (which runs this only when FUZZ_SECONDS
# or LEAKHOUND_FUZZ=1 is set): the instrumented nightly build of every dependency takes
# minutes on its own. As a separate job, scheduled or on changes to src/:
#   rustup toolchain install nightly && cargo install cargo-fuzz --locked
#   fuzz/run.sh 300          # five minutes per target; exit 1 on a crash
# and keep fuzz/artifacts/ when it fails. leakhound is built without its network features
# (fuzz/Cargo.toml): nothing fuzzed needs them.
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-${FUZZ_SECONDS:-30}}
shift || true
all=$(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^leakhound-fuzz$')
targets=("$@")
((${#targets[@]})) || mapfile -t targets <<<"$all"

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz: skipped: no nightly toolchain (rustup toolchain install nightly)"
  exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "fuzz: skipped: cargo-fuzz is not installed (cargo install cargo-fuzz --locked)"
  exit 0
fi

# Our own target dir: instrumented builds must not mix with the normal ones.
unset CARGO_TARGET_DIR
target_dir=$PWD/target
lock=()
command -v flock >/dev/null && lock=(flock /tmp/cargo.lock)
# No sanitizer: the library is safe Rust, where panics and overflow checks (on in this build)
# are what the fuzzer finds, and the build is much quicker without ASan.
build_flags=(--sanitizer none --target-dir "$target_dir")
# All targets in one build: they share the library, and each binary is tiny.
"${lock[@]}" cargo +nightly fuzz build "${build_flags[@]}"
triple=$(rustc +nightly -vV | sed -n 's/^host: //p')
bin_dir=$target_dir/$triple/release

status=0
for t in "${targets[@]}"; do
  [[ -x $bin_dir/$t ]] || { echo "fuzz: $t: not built"; status=1; continue; }
  mkdir -p "corpus/$t" "artifacts/$t" "logs"
  log=logs/$t.log
  echo "fuzz: $t for ${secs}s"
  # -jobs=1 writes libFuzzer's output to fuzz-0.log in the working directory.
  if ! (cd logs && nice -n 19 "$bin_dir/$t" \
    -max_total_time="$secs" -rss_limit_mb=2048 -jobs=1 -workers=1 -max_len=65536 \
    -timeout=30 -artifact_prefix="$PWD/../artifacts/$t/" "../corpus/$t" >/dev/null 2>&1); then
    status=1
  fi
  mv -f logs/fuzz-0.log "$log" 2>/dev/null || true
  # The last stats line (execs, coverage, corpus size) and any crash report.
  grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "$log" | tail -n 1 || true
  if grep -qE 'panicked|ERROR: libFuzzer|deadly signal|Test unit written' "$log"; then
    status=1
    grep -E "panicked at|Test unit written|ERROR: libFuzzer" "$log" | head -n 5
  fi
done
exit "$status"
