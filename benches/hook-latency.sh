#!/usr/bin/env bash
# Latency of `leakhound hook claude`, one process per event as the agents run it: a Claude Code
# PostToolUse event for a Bash command whose stdout is 100 KB, with and without a fake AWS key
# pair in it; p50 and p99 over RUNS runs (default 200) of the release binary. For scale: the
# same process doing nothing (`--version`), and a tiny prompt event (start-up alone). Then the
# same events answered by a hook server (`--server`, started and warm before the timed runs).
# The cases take turns run by run, so a noisy stretch of a shared machine falls on them alike.
#
#     benches/hook-latency.sh [path/to/release/leakhound] [RUNS]
#
# Build the binary first: cargo build --release.
set -euo pipefail
LH="${1:-target/release/leakhound}"
RUNS="${2:-200}"
[ -x "$LH" ] || { echo "benches/hook-latency.sh: no binary at $LH (cargo build --release)" >&2; exit 2; }

python3 - "$LH" "$RUNS" <<'EOF'
import json, os, random, string, subprocess, sys, tempfile, time

lh, runs = sys.argv[1], int(sys.argv[2])
rng = random.Random(7)
# Fake, generated here: the shape of an AWS key pair, never a real one.
key = "AKIA" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
secret = "".join(rng.choice(string.ascii_letters + string.digits + "+/") for _ in range(40))

def build_log(with_secret):
    lines, size, i = [], 0, 0
    while size < 100_000:
        line = f"[{i:05d}] compiling crate_{i % 97} v0.{i % 13}.{i % 7} (/src/crate_{i % 97}) in {i % 900}ms\n"
        if with_secret and i == 700:
            line = f"export AWS_ACCESS_KEY_ID={key}\nexport AWS_SECRET_ACCESS_KEY={secret}\n"
        lines.append(line); size += len(line); i += 1
    return "".join(lines)[:100_000]

def event(stdout):
    return json.dumps({
        "session_id": "bench", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "permission_mode": "default", "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "cargo build -v"}, "tool_use_id": "toolu_bench",
        "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False},
    }).encode()

def run(args, data):
    t = time.perf_counter()
    p = subprocess.run([lh] + args, input=data, capture_output=True)
    took = (time.perf_counter() - t) * 1000
    if p.returncode != 0:
        sys.exit(f"{args}: exit {p.returncode}: {p.stderr.decode()[:300]}")
    return took, p.stdout

clean, dirty = event(build_log(False)), event(build_log(True))
prompt = json.dumps({"session_id": "b", "transcript_path": "/t", "cwd": "/",
                     "hook_event_name": "UserPromptSubmit", "prompt": "fix the build"}).encode()
# The hook server's socket in a folder of this run's, so that the server is this binary's
# alone; it idles out 30 s after the last run.
runtime = tempfile.mkdtemp(prefix="lh-hook-bench-")
os.environ["XDG_RUNTIME_DIR"] = runtime
served = ["hook", "claude", "--server-idle", "30", "--server"]
print(f"runs per case: {runs}; event sizes: {len(clean)} and {len(dirty)} bytes")
print(f"{'case':44} {'p50 ms':>8} {'p99 ms':>8}")
cases = [
    ("process only (--version)", ["--version"], b""),
    ("tiny prompt event, no secret", ["hook", "claude"], prompt),
    ("100 KB Bash output, no secret", ["hook", "claude"], clean),
    ("100 KB Bash output, AWS key pair", ["hook", "claude"], dirty),
    ("with --server: 100 KB, no secret", served, clean),
    ("with --server: 100 KB, AWS key pair", served, dirty),
]
# The server started (and warmed on both events) before the runs are timed.
for data_ in (clean, dirty):
    subprocess.run([lh] + served[:-1] + ["--server=wait"], input=data_, check=True,
                   capture_output=True)
# The cases take turns, one run each, so that a noisy stretch of the machine's falls on all
# of them alike rather than on whichever case was running then.
times = [[] for _ in cases]
for _ in range(runs):
    for i, (name, args, data) in enumerate(cases):
        took, out = run(args, data)
        times[i].append(took)
        if "pair" in name:
            assert key.encode() not in out and secret.encode() not in out, "not masked"
            assert b"updatedToolOutput" in out
for (name, _, _), t in zip(cases, times):
    t.sort()
    p50, p99 = t[len(t) // 2], t[min(len(t) - 1, int(len(t) * 0.99))]
    print(f"{name:44} {p50:8.1f} {p99:8.1f}")
EOF
