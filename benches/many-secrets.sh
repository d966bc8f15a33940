#!/usr/bin/env bash
# Time against the number of secrets (issue 25: linear, 100k secrets under 5 s): N fake AWS
# key pairs (default 100,000) in one file for `scan` and `filter`, and in one Claude Code
# PostToolUse event for `hook claude`; each timed once (wall clock), with the count masked or
# found. The values are generated here, never real ones. KIND=jwt makes them N fake JWTs
# instead, each assigned once and repeated bare later: values that all share their first
# bytes (`eyJhbGci`), the shape that made masking by value quadratic before 97c86d3.
#
#     benches/many-secrets.sh [path/to/release/leakhound] [N]
#     KIND=jwt benches/many-secrets.sh [path/to/release/leakhound] [N]
set -euo pipefail
LH="${1:-target/release/leakhound}"
N="${2:-100000}"
[ -x "$LH" ] || { echo "benches/many-secrets.sh: no binary at $LH (cargo build --release)" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

python3 - "$dir" "$N" "${KIND:-aws}" <<'PY'
import base64, json, random, string, sys
d, n, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(25)
b32, b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", string.ascii_letters + string.digits + "+/"
lines = []
if kind == "jwt":
    def url64(b):
        return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
    tokens = []
    for i in range(n):
        claims = json.dumps({"sub": str(rng.randrange(10**12)), "n": rng.randrange(10**9)})
        sig = url64(bytes(rng.getrandbits(8) for _ in range(32)))
        tokens.append("eyJhbGciOiJIUzI1NiJ9." + url64(claims.encode()) + "." + sig)
    lines = [f'auth_token = "{t}"\n' for t in tokens] + [f"retry with {t} now\n" for t in tokens]
else:
    for i in range(n):
        key = "AKIA" + "".join(rng.choice(b32) for _ in range(16))
        secret = "".join(rng.choice(b64) for _ in range(40))
        lines.append(f"AWS_ACCESS_KEY_ID={key} AWS_SECRET_ACCESS_KEY={secret}\n")
text = "".join(lines)
open(f"{d}/many.env", "w").write(text)
event = {"session_id": "s", "transcript_path": "/t", "cwd": "/", "hook_event_name": "PostToolUse",
         "tool_name": "Bash", "tool_input": {"command": "env"}, "tool_use_id": "t",
         "tool_response": {"stdout": text, "stderr": "", "interrupted": False, "isImage": False}}
open(f"{d}/event.json", "w").write(json.dumps(event))
PY
size=$(du -h "$dir/many.env" | cut -f1)
echo "$N ${KIND:-aws} secrets' lines, $size"
t() { local s e; s=$(date +%s.%N); "$@"; e=$(date +%s.%N); echo "  $(echo "$e - $s" | bc) s"; }
echo "scan (findings):"
t sh -c "'$LH' scan '$dir/many.env' --format jsonl --min-confidence low | wc -l"
echo "filter (masks):"
t sh -c "'$LH' filter < '$dir/many.env' | grep -o 'REDACTED' | wc -l"
echo "hook claude (masks in the answer):"
t sh -c "'$LH' hook claude < '$dir/event.json' | grep -o 'REDACTED' | wc -l"
