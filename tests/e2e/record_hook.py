"""A hook command that records what a real agent sends on stdin, then hands it on unchanged.

    python3 record_hook.py RECORD.jsonl LEAKHOUND hook AGENT   # recorded, then leakhound answers
    python3 record_hook.py RECORD.jsonl --only-record EVENT    # recorded, answered with {}

tests/e2e/agents.py --record puts it in front of the `leakhound hook` commands that `agents
install` wrote, so tests/it/real_agents.rs can compare the hand-written hook fixtures
(tests/fixtures/agents/) with the events the real agents send, key by key. Each line of
RECORD.jsonl is {"argv": [...], "event": <the JSON the agent sent>}. The record holds the
run's fake credentials; it lives in the test's temporary directory and the test prints only
key names from it.

The hook's input goes to leakhound as its stdin through an unlinked temporary file and exec:
leakhound's answer, exit code and any signal reach the agent exactly as without the recorder.
"""

import fcntl
import json
import os
import sys
import tempfile


def main():
    record, rest = sys.argv[1], sys.argv[2:]
    data = sys.stdin.buffer.read()
    try:
        event = json.loads(data)
    except ValueError:
        event = None
    line = json.dumps({"argv": rest, "event": event}) + "\n"
    # Agents may run hooks side by side: one whole line per event.
    with open(record, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.write(line)
    if rest[:1] == ["--only-record"]:
        sys.stdout.write("{}\n")
        return
    with tempfile.TemporaryFile() as held:
        held.write(data)
        held.seek(0)
        os.dup2(held.fileno(), 0)
    os.execv(rest[0], rest)


if __name__ == "__main__":
    main()
