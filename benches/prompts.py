#!/usr/bin/env python3
"""When a prompt written with no line end reaches the terminal through `leakhound run`.

  benches/prompts.py [target/release/leakhound]

For each prompt a child writes it, sleeps a second, then writes `x` and a line end. Prints
what came out and when: a prompt a stream holds shows only once the child writes again.
"""
import os, select, subprocess, sys, time

LH = sys.argv[1] if len(sys.argv) > 1 else "target/release/leakhound"
PROMPTS = ["Password: ", ">>> ", "Enter token: ", "token_count> ", "api_key = ", "Secret key: ",
           "postgres://app:", "export AWS_SECRET_ACCESS_KEY=", "ghp_abc"]

for prompt in PROMPTS:
    script = f"import sys, time; sys.stdout.write({prompt!r}); sys.stdout.flush(); time.sleep(1.0); print('x')"
    p = subprocess.Popen([LH, "run", "--", "python3", "-c", script], stdout=subprocess.PIPE)
    start, fd, got = time.time(), p.stdout.fileno(), []
    while select.select([fd], [], [], 3)[0]:
        b = os.read(fd, 1000)
        if not b:
            break
        got.append(f"+{time.time() - start:.2f}s {b!r}")
    p.wait()
    print(f"{prompt!r:34} " + "  ".join(got))
