#!/usr/bin/env python3
"""Latency leakhound mcp-proxy adds per MCP message.

  benches/mcp_latency.py [target/release/leakhound]

A stdio JSON-RPC server in this file (stdlib only, so the numbers are the proxy's, not an
SDK's) answers each `tools/call` request at once with a result whose text is N bytes of
log-like lines, with or without a fake AWS key pair (generated here) in it. A client writes one
request at a time and times it until the whole response line is back, once straight to the
server and once through `leakhound mcp-proxy`; the difference is what the proxy adds for one
request and its response. Medians and p99 of repeated round trips.
"""
import json, os, random, statistics, string, subprocess, sys, tempfile, time

LH = sys.argv[1] if len(sys.argv) > 1 else "target/release/leakhound"

SERVER = r'''
import json, sys
bodies = json.load(open(sys.argv[1]))
for line in sys.stdin:
    req = json.loads(line)
    text = bodies[req["params"]["arguments"]["body"]]
    resp = {"jsonrpc": "2.0", "id": req["id"], "result": {
        "content": [{"type": "text", "text": text}], "isError": False}}
    sys.stdout.write(json.dumps(resp) + "\n")
    sys.stdout.flush()
'''


def fake_aws(rng):
    key = "AKIA" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
    secret = "".join(rng.choice(string.ascii_letters + string.digits + "+/") for _ in range(40))
    return key, secret


def body(size, rng, secret):
    lines, n = [], 0
    while n < size:
        l = (f"2026-12-01T13:{rng.randrange(60):02d}:{rng.randrange(60):02d}Z INFO worker-{rng.randrange(8)} "
             f"processed batch {rng.randrange(10**6)} in {rng.random() * 100:.2f} ms path=/srv/app/{rng.randrange(999)}.py")
        lines.append(l)
        n += len(l) + 1
    if secret:
        key, sec = fake_aws(rng)
        at = len(lines) // 2
        lines[at:at] = [f"aws_access_key_id={key}", f"aws_secret_access_key={sec}"]
    return "\n".join(lines)


def round_trips(cmd, name, n):
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    out = p.stdout
    times = []
    for i in range(n + 5):
        req = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
               "params": {"name": "read_log", "arguments": {"body": name}}}
        line = (json.dumps(req) + "\n").encode()
        t = time.perf_counter()
        p.stdin.write(line)
        got = bytearray()
        while not got.endswith(b"\n"):
            chunk = os.read(out.fileno(), 1 << 20)
            if not chunk:
                raise SystemExit(f"{cmd[0]} closed its output")
            got += chunk
        if i >= 5:  # warm-up
            times.append((time.perf_counter() - t) * 1000)
        time.sleep(0.002)
    p.stdin.close()
    p.wait()
    times.sort()
    return statistics.median(times), times[max(0, int(len(times) * 0.99) - 1)]


def main():
    rng = random.Random(14)
    cases = [("200 B", 200, 300), ("10 KB", 10_000, 300), ("100 KB", 100_000, 200),
             ("1 MB", 1_000_000, 40)]
    bodies = {}
    for label, size, _ in cases:
        bodies[f"{label} clean"] = body(size, rng, False)
        bodies[f"{label} secret"] = body(size, rng, True)
    f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump(bodies, f)
    f.close()
    server = [sys.executable, "-c", SERVER, f.name]
    proxied = [LH, "mcp-proxy", "--"] + server
    print("| result text | direct p50 / p99 | through mcp-proxy p50 / p99 | added p50 |")
    print("|---|---:|---:|---:|")
    for label, _, n in cases:
        for kind in ("clean", "secret"):
            name = f"{label} {kind}"
            d50, d99 = round_trips(server, name, n)
            p50, p99 = round_trips(proxied, name, n)
            print(f"| {name} | {d50:.2f} / {d99:.2f} ms | {p50:.2f} / {p99:.2f} ms | {p50 - d50:.2f} ms |",
                  flush=True)
    os.unlink(f.name)


if __name__ == "__main__":
    main()
