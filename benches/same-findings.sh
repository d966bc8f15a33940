#!/usr/bin/env bash
# Findings before and after a speed change must be the same: scans each PATH with two
# leakhound binaries (JSON reports, the same flags) and compares the findings by path, line,
# column, rule and fingerprint, and their count. Exit 0 when they agree, 1 when they differ
# (the first differences are printed), 2 on a usage error.
#
#     benches/same-findings.sh OLD_BINARY NEW_BINARY PATH... [-- SCAN_FLAGS...]
#
# e.g. benches/same-findings.sh /tmp/lh-main target/release/leakhound \
#        /tmp/leakhound-realcode/tree /tmp/leakhound-bench/tree
#      benches/same-findings.sh OLD NEW /tmp/leakhound-bench/big.txt -- --max-file-size 0
# Both binaries get one fingerprint key (a temporary key file), so fingerprints compare.
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,12p "$0" >&2; exit 2; }
old=$1 new=$2
shift 2
paths=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do paths+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
flags=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# One fingerprint key for both runs, random, made here.
LEAKHOUND_FINGERPRINT_KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
export LEAKHOUND_FINGERPRINT_KEY
status=0
for p in "${paths[@]}"; do
  for side in old new; do
    bin=${!side}
    rc=0
    "$bin" scan "$p" --format json -o "$work/$side.json" "${flags[@]}" || rc=$?
    [ "$rc" -le 1 ] || { echo "$bin scan $p: exit $rc" >&2; exit 2; }
  done
  python3 - "$p" "$work/old.json" "$work/new.json" <<'EOF' || status=1
import json, sys
path, old, new = sys.argv[1:]
def rows(f):
    d = json.load(open(f))
    return sorted((x["path"], x["line"], x["column"], x["rule"], x["fingerprint"]) for x in d["findings"])
a, b = rows(old), rows(new)
if a == b:
    print(f"{path}: same {len(a)} findings")
    sys.exit(0)
gone, added = sorted(set(a) - set(b)), sorted(set(b) - set(a))
print(f"{path}: {len(a)} findings before, {len(b)} after; {len(gone)} gone, {len(added)} new")
for r in gone[:10]:
    print("  gone", r[:4])
for r in added[:10]:
    print("  new ", r[:4])
sys.exit(1)
EOF
done
exit $status
