#!/usr/bin/env bash
# Inputs made to find a scan's cliffs: one shape repeated into one file (a long line of
# `password: `, PEM headers, a run of `A`s, `\x41` escapes, dense keywords, one secret a
# line, many on one line, ...), at two sizes. Each file is scanned once per binary, timed
# with its peak memory; `x4` is the time at 4 SIZE over the time at SIZE, about 4 where the
# cost is linear and far more where it is not. A run that takes over TIMEOUT seconds is cut
# off and shown as such.
#
#     benches/adversarial.sh BINARY [OTHER_BINARY]      # SIZE=1000000 TIMEOUT=60
#
# The files are generated here (random values from a fixed seed, no real secret) in a
# temporary folder that is removed at the end.
set -euo pipefail
[ $# -ge 1 ] || { sed -n 2,13p "$0" >&2; exit 2; }
SIZE=${SIZE:-1000000}
TIMEOUT=${TIMEOUT:-60}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

python3 - "$dir" "$SIZE" <<'PY'
import base64, random, sys
d, size = sys.argv[1], int(sys.argv[2])
rng = random.Random(31)
alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
shapes = {
    "password-line": "password: ",
    "keywords-line": "password=secret token key api_key ",
    "pem-headers": "-----BEGIN RSA PRIVATE KEY-----\n",
    "run-of-A": "A",
    "run-of-a": "a",
    "hex-escapes": "\\x41",
    "unicode-escapes": "\\u0041",
    "percent": "%41",
    "ansi": "\x1b[31mA\x1b[0m",
    "akia": "AKIA",
    "sk-dash": "sk-",
    "bearer": "Bearer ",
}
for n in (size, 4 * size):
    for name, unit in shapes.items():
        open(f"{d}/{name}-{n}.txt", "w").write((unit * (n // len(unit) + 1))[:n])
    lines, total = [], 0
    while total < n:
        line = 'api_key = "%s"\n' % "".join(rng.choice(alnum) for _ in range(32))
        lines.append(line)
        total += len(line)
    open(f"{d}/one-secret-a-line-{n}.txt", "w").write("".join(lines))
    # The same on one line, and fake AWS pairs on one line: the findings of one long line.
    for name, make in (
        ("secrets-one-line", lambda: 'x password = "%s" ' % "".join(rng.choice(alnum) for _ in range(20))),
        ("aws-pairs-one-line", lambda: "AKIA%s %s " % (
            "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16)),
            "".join(rng.choice(alnum + "+/") for _ in range(40)))),
    ):
        parts, total = [], 0
        while total < n:
            parts.append(make())
            total += len(parts[-1])
        open(f"{d}/{name}-{n}.txt", "w").write("".join(parts)[:n])
    raw = bytes(rng.getrandbits(8) for _ in range(n * 3 // 4))
    open(f"{d}/base64-{n}.txt", "w").write(base64.b64encode(raw).decode()[:n])
PY

run() {  # run BINARY FILE: prints "SECONDS PEAK_KB", or "cut-off" past TIMEOUT
  local rc=0
  timeout "$TIMEOUT" /usr/bin/time -f '%e %M' -o "$dir/time" "$1" scan --max-file-size 0 \
    --format json -o "$dir/report.json" "$2" >/dev/null 2>&1 || rc=$?
  # 0 clean, 1 findings; 124 is the timeout, anything else an error.
  case $rc in
    0 | 1) tail -1 "$dir/time" ;;  # after "Command exited with non-zero status 1"
    124) echo cut-off ;;
    *) echo "exit $rc" ;;
  esac
}

printf '%-20s' shape
for b in "$@"; do printf '%34s' "$(basename "$b")"; done
echo
for f in "$dir"/*-"$SIZE".txt; do
  name=$(basename "$f" "-$SIZE.txt")
  printf '%-20s' "$name"
  for b in "$@"; do
    read -r t1 m1 < <(run "$b" "$f") || true
    read -r t4 m4 < <(run "$b" "$dir/$name-$((4 * SIZE)).txt") || true
    if ! [[ $t1 =~ ^[0-9.]+$ && $t4 =~ ^[0-9.]+$ ]]; then
      printf '%34s' "$t1 / $t4 (s)"
    else
      ratio=$(python3 -c "print(f'{$t4 / max($t1, 0.01):.1f}')")
      printf '%34s' "$t1 s, $t4 s (x4: $ratio), $((m4 / 1024)) MB"
    fi
  done
  echo
done
