#!/usr/bin/env python3
"""Latency leakhound filter adds per line, and its throughput.

  benches/filter_latency.py [target/release/leakhound]

Writes lines one at a time (with a pause between them) into `leakhound filter` and times how
long each takes to come out, against `cat` as the baseline; then pipes a large generated
text through both and reports MB/s; then times a prompt (a line without its end, as an
interpreter leaves it waiting for input) from its write until it comes out, the first one a
process sees (filter forwards a partial line after --idle-ms, 50 ms, and builds its
automaton of what could still become a match then). Medians of repeated measurements.
"""
import os, statistics, subprocess, sys, time

LH = sys.argv[1] if len(sys.argv) > 1 else "target/release/leakhound"

def latency(cmd, n=200):
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    out = []
    for i in range(n):
        line = f"step {i}: loss=0.{i:04d} token_count={i} path=/tmp/run/{i}\n".encode()
        t = time.perf_counter()
        p.stdin.write(line)
        got = b""
        while not got.endswith(b"\n"):
            got += os.read(p.stdout.fileno(), 4096)
        out.append((time.perf_counter() - t) * 1000)
        time.sleep(0.002)
    p.stdin.close()
    p.wait()
    return statistics.median(out), sorted(out)[int(n * 0.99) - 1]

def first_prompt(cmd, runs=9):
    took = []
    for _ in range(runs):
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        p.stdin.write(b"loading data ...\n")
        got = b""
        while not got.endswith(b"\n"):
            got += os.read(p.stdout.fileno(), 4096)
        t = time.perf_counter()
        p.stdin.write(b"data> ")
        got = b""
        while not got.endswith(b"> "):
            got += os.read(p.stdout.fileno(), 4096)
        took.append((time.perf_counter() - t) * 1000)
        p.stdin.close()
        p.wait()
    return statistics.median(took)

def throughput(cmd, data, runs=5):
    best = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, input=data, stdout=subprocess.DEVNULL, check=True)
        best.append(len(data) / (time.perf_counter() - t) / 1e6)
    return statistics.median(best)

words = b"result value items config handler request response client server token_count path "
data = (words * 12 + b"\n") * 300_000  # ~300 MB of short lines... trimmed below
data = data[: 100 << 20]
for name, cmd in [("cat", ["cat"]), ("leakhound filter", [LH, "filter"])]:
    med, p99 = latency(cmd)
    print(f"{name:<18} per-line latency median {med:.2f} ms, p99 {p99:.2f} ms; "
          f"throughput {throughput(cmd, data):.0f} MB/s; "
          f"first prompt {first_prompt(cmd):.0f} ms")
