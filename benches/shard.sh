#!/usr/bin/env bash
# Shards side by side (issue 16): a directory tree and a git history, each scanned whole and as
# N shards started at once, in one alternating hyperfine run; then what one shard costs alone
# (each shard still lists the whole tree or history, and reads only its share).
#
#   benches/shard.sh
#   TREE=/some/tree REPO=/some/repo.git N=2 RUNS=5 benches/shard.sh
#
#   LH    leakhound binary (default target/release/leakhound)
#   TREE  a directory (default the real-code tree of benches/realcode/build.sh)
#   REPO  a repository (default the trufflehog mirror fetched for the peer examples)
#   N     shards run side by side (default 2: one per core here)
#
# Everything goes to $OUT (default /tmp/leakhound-shard-bench); nothing is committed.
set -euo pipefail
cd "$(dirname "$0")/.."
LH=$(realpath "${LH:-target/release/leakhound}")
TREE=${TREE:-/tmp/leakhound-realcode/tree}
REPO=${REPO:-/work/.mirror/trufflesecurity+trufflehog/repo}
N=${N:-2}
RUNS=${RUNS:-5}
OUT=${OUT:-/tmp/leakhound-shard-bench}
mkdir -p "$OUT"
export LEAKHOUND_FINGERPRINT_KEY=shard-bench-key-0123456789abcdef

side_by_side() {  # side_by_side SUBCOMMAND TARGET: N shards at once, one thread each
  local cmd="" k
  for ((k = 0; k < N; k++)); do
    cmd+="$LH $1 $2 -j 1 --shard $k/$N --fail-on none --format json -o $OUT/$1-$k.json & "
  done
  echo "sh -c '${cmd}wait'"
}

hyperfine -w 1 -r "$RUNS" --export-json "$OUT/hyperfine-shards.json" \
  -n "tree whole -j1" "$LH scan $TREE -j 1 --fail-on none --format json -o $OUT/tree-whole.json" \
  -n "tree whole -j$N" "$LH scan $TREE -j $N --fail-on none --format json -o $OUT/tree-whole.json" \
  -n "tree $N shards -j1 each" "$(side_by_side scan "$TREE")" \
  -n "git whole -j1" "$LH git $REPO -j 1 --fail-on none --format json -o $OUT/git-whole.json" \
  -n "git whole -j$N" "$LH git $REPO -j $N --fail-on none --format json -o $OUT/git-whole.json" \
  -n "git $N shards -j1 each" "$(side_by_side git "$REPO")" \
  -n "git 1 of 8 shards alone -j1" "$LH git $REPO -j 1 --shard 0/8 --fail-on none --format json -o $OUT/one-of-8-git.json" \
  -n "tree 1 of 8 shards alone -j1" "$LH scan $TREE -j 1 --shard 0/8 --fail-on none --format json -o $OUT/one-of-8-tree.json"

# The merged shards are the whole run's report (timings aside).
for sub in scan git; do
  name=$([[ $sub == scan ]] && echo tree || echo git)
  "$LH" report merge --shards "$OUT"/$sub-[0-9]*.json --format json -o "$OUT/$name-merged.json" || true
  python3 - "$OUT/$name-whole.json" "$OUT/$name-merged.json" "$name" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    d["summary"]["elapsed"] = 0
print(f"{sys.argv[3]}: merged == whole: {a == b}; {a['summary']['files']} blobs, "
      f"{a['summary']['bytes'] / 1e6:.0f} MB, {len(a['findings'])} findings")
PY
done
python3 - "$OUT/hyperfine-shards.json" "$OUT/tree-whole.json" "$OUT/git-whole.json" <<'PY'
import json, sys
res = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
med = {k: r["median"] for k, r in res.items()}
for k, v in med.items():
    print(f"{k:32} median {v:7.2f} s")
for kind, path in (("tree", sys.argv[2]), ("git", sys.argv[3])):
    whole1 = next(v for k, v in med.items() if k.startswith(f"{kind} whole -j1"))
    shards = next(v for k, v in med.items() if k.startswith(f"{kind} ") and "shards -j1 each" in k)
    one8 = next(v for k, v in med.items() if k.startswith(f"{kind} 1 of 8"))
    mb = json.load(open(path))["summary"]["bytes"] / 1e6
    print(f"{kind}: shards side by side {whole1 / shards:.2f}x one whole -j1 run; "
          f"{mb / whole1:.0f} MB/s per core whole; one shard of 8 alone takes "
          f"{one8 / whole1:.2f} of the whole (1/8 = 0.125)")
PY
