"""Real coding agents, headless, against the fake model (model.py), with and without leakhound.

    python3 tests/e2e/agents.py --agent claude --leakhound target/release/leakhound \
        --bin-dir target/e2e/node_modules/.bin [--mode bare|protected|both] [--keep DIR] \
        [--record EVENTS.jsonl]

Each run gets a new HOME and workspace under a temporary directory, with fake credentials
generated for it (secrets.py), and two sessions:

- tools: the model asks, one after another, for a shell command printing an AWS pair (the
  secret also repeated bare), a file read of a config holding a GitHub token and a password, a
  340 KB output with an Anthropic key at both ends, an MCP tool through the agent's own MCP
  support (a Slack token), and an MCP tool behind `leakhound mcp-proxy` (a Stripe key);
- prompt: the user's prompt holds an AWS pair.

`bare` runs the agent as installed, with no hooks and no proxy: every credential must reach
the model whole, or the harness could not see a leak. `protected` runs `leakhound agents
install --agent NAME` first (nothing else is done by hand) and puts the second MCP server
behind `leakhound mcp-proxy`: no request the model receives may hold an 8-character piece of
any credential, in its raw text or in any JSON string in it (JSON inside strings decoded).
The tools session must also get through its whole script (the agent must not stop early).

Exit 0 when every check holds; the report names each failed check and never a credential.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import model as fake  # noqa: E402
import fakecreds as creds  # noqa: E402
from agent_configs import AGENTS  # noqa: E402

HERE = Path(__file__).resolve().parent
MCP_SERVER = HERE / "mcp_server.py"
RUN_TIMEOUT = 240


class Workspace:
    """HOME, workspace and credentials of one run."""

    def __init__(self, root):
        self.root = Path(root)
        self.home = self.root / "home"
        self.ws = self.root / "work"
        self.logs = self.root / "logs"
        for d in (self.home, self.ws, self.logs):
            d.mkdir(parents=True, exist_ok=True)
        key_id, secret = creds.aws_pair()
        self.secrets = {
            "shell: AWS key id": key_id,
            "shell: AWS secret": secret,
            "read: GitHub token": creds.github_token(),
            "read: password": creds.weak_password(),
            "long output: Anthropic key": creds.anthropic_key(),
            "mcp: Slack token": creds.slack_bot_token(),
            "mcp-proxy: Stripe key": creds.stripe_key(),
        }
        pid, psecret = creds.aws_pair()
        self.prompt_secrets = {"prompt: AWS key id": pid, "prompt: AWS secret": psecret}
        s = self.secrets
        (self.ws / "creds.env").write_text(
            f"AWS_ACCESS_KEY_ID={s['shell: AWS key id']}\n"
            f"AWS_SECRET_ACCESS_KEY={s['shell: AWS secret']}\n"
            f"# the deploy script saved: {s['shell: AWS secret']}\n"
        )
        (self.ws / "config.yaml").write_text(
            "service:\n  name: billing\n"
            f"  github_token: {s['read: GitHub token']}\n"
            f"  POSTGRES_PASSWORD: {s['read: password']}\n"
        )
        filler = "".join(f"line {i:06d} of the build log, nothing to see here\n" for i in range(6200))
        (self.ws / "build.log").write_text(
            f"ANTHROPIC_API_KEY={s['long output: Anthropic key']}\n"
            + filler
            + f"retrying with {s['long output: Anthropic key']}\n"
        )

    def script(self):
        return [
            fake.Step("shell", "cat creds.env"),
            fake.Step("read", str(self.ws / "config.yaml")),
            fake.Step("shell", "cat build.log"),
            fake.Step("mcp", ("secrets", "get_config")),
            fake.Step("mcp", ("proxied", "get_config")),
        ]

    def mcp_servers(self, leakhound, protected):
        """(name, argv, env) of the two MCP servers; the second behind mcp-proxy when protected."""
        python = sys.executable
        direct = [python, str(MCP_SERVER)]
        proxied = [leakhound, "mcp-proxy", "--", python, str(MCP_SERVER)] if protected else direct
        return [
            ("secrets", direct, {"LH_E2E_SECRET": self.secrets["mcp: Slack token"]}),
            ("proxied", proxied, {"LH_E2E_SECRET": self.secrets["mcp-proxy: Stripe key"]}),
        ]


def base_env(ws, bin_dir):
    """A small environment: nothing of the caller's credentials or settings reaches the agent."""
    env = {
        "HOME": str(ws.home),
        "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "CI": "1",
        # leakhound reads the user's config from here: none, so the built-in rules only.
        "XDG_CONFIG_HOME": str(ws.home / ".config"),
        "TMPDIR": str(ws.root / "tmp"),
    }
    (ws.root / "tmp").mkdir(exist_ok=True)
    return env


def run_session(agent, ws, args, protected, session, prompt, script):
    model = fake.Model(script)
    try:
        env = base_env(ws, args.bin_dir)
        argv, extra = agent.configure(ws, model.url, ws.mcp_servers(args.leakhound, protected), prompt, env)
        env.update(extra)
        tag = f"{'protected' if protected else 'bare'}-{session}"
        t0 = time.monotonic()
        with open(ws.logs / f"{tag}.out", "wb") as out, open(ws.logs / f"{tag}.err", "wb") as err:
            try:
                proc = subprocess.run(argv, cwd=ws.ws, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                      stderr=err, timeout=RUN_TIMEOUT)
                code = proc.returncode
            except subprocess.TimeoutExpired:
                code = "timeout"
        took = time.monotonic() - t0
        (ws.logs / f"{tag}.requests.jsonl").write_text(
            "".join(json.dumps({"method": m, "path": p, "body": b}) + "\n" for m, p, b in model.recorder.requests))
        return model.recorder, code, took
    finally:
        model.close()


def reached_end(recorder, agent, script):
    """Whether some request carried the result of every step of the script."""
    return any(agent.results_in(body) >= len(script) for _, _, body in recorder.requests if body.strip())


def record_hooks(agent, ws, args):
    """Put record_hook.py in front of each `leakhound hook` command that install wrote, so the
    events the real agent sends are kept in args.record; for Copilot, also record the
    VS Code-compatible PascalCase events, which leakhound does not install but answers."""
    recorder = [sys.executable, str(HERE / "record_hook.py"), str(args.record)]
    ours = f"{args.leakhound} hook "
    for path in ws.home.rglob("*.json"):
        text = path.read_text()
        if ours in text:
            path.write_text(text.replace(ours, " ".join(recorder + [ours])))
    if agent.name == "copilot":
        only = " ".join(recorder + ["--only-record"])
        hooks = {event: [{"type": "command", "bash": f"{only} {event}"}]
                 for event in ("PostToolUse", "PreToolUse", "UserPromptSubmit")}
        (ws.home / ".copilot" / "hooks" / "record-pascal-case.json").write_text(
            json.dumps({"version": 1, "hooks": hooks}, indent=2))


def check(agent, args, protected):
    failures = []
    with tempfile.TemporaryDirectory(prefix=f"lh-e2e-{agent.name}-") as tmp:
        root = Path(args.keep) / f"{agent.name}-{'protected' if protected else 'bare'}" if args.keep else Path(tmp)
        if args.keep and root.exists():
            shutil.rmtree(root)
        ws = Workspace(root)
        if protected:
            env = base_env(ws, args.bin_dir)
            install = [args.leakhound, "agents", "install", "--agent", agent.name] + (["--server"] if args.server else [])
            r = subprocess.run(install, cwd=ws.ws, env=env, capture_output=True, text=True, timeout=60)
            (ws.logs / "install.txt").write_text(r.stdout + r.stderr)
            if r.returncode != 0:
                return [f"`leakhound agents install --agent {agent.name}` exited {r.returncode}: {r.stderr.strip()}"]
            if args.record:
                record_hooks(agent, ws, args)
        mode = "protected" if protected else "bare"
        script = ws.script()
        sessions = [
            ("tools", "Please run the checks the task needs.", script, ws.secrets),
            ("prompt", "Deploy with key {id} and secret {secret} please.".format(
                id=ws.prompt_secrets["prompt: AWS key id"], secret=ws.prompt_secrets["prompt: AWS secret"]),
             [], ws.prompt_secrets),
        ]
        for session, prompt, steps, secrets in sessions:
            recorder, code, took = run_session(agent, ws, args, protected, session, prompt, steps)
            print(f"  {agent.name} {mode} {session}: exit {code}, {len(recorder.requests)} requests, {took:.1f} s")
            failures += [f"{mode} {session}: fake model: {e}" for e in dict.fromkeys(recorder.errors)]
            if code == "timeout":
                failures.append(f"{mode} {session}: the agent ran over {RUN_TIMEOUT} s")
            if session == "tools" and not reached_end(recorder, agent, steps):
                failures.append(f"{mode} {session}: the agent did not send back the result of all "
                                f"{len(steps)} tool calls (exit {code}; logs in {ws.logs})")
            for what, secret in secrets.items():
                if protected:
                    hits = fake.seen(recorder, secret)
                    if hits:
                        paths = sorted({p for _, p in hits})
                        failures.append(f"{mode} {session}: {what} reached the model ({len(hits)} requests: {paths})")
                elif what in getattr(agent, "masks_itself", ()):
                    if fake.holds_whole(recorder, secret):
                        failures.append(f"{mode} {session}: {what} reached the model whole, but the "
                                        f"harness says {agent.name} masks it itself: update the harness")
                elif not (session == "prompt" and not recorder.requests) and not fake.holds_whole(recorder, secret):
                    failures.append(f"{mode} {session}: {what} never reached the model whole without leakhound: "
                                    "the harness could not see this leak")
            if not protected and session == "prompt" and not recorder.requests:
                failures.append(f"{mode} prompt: the agent sent no request at all")
        if protected and args.server:
            failures += served(ws)
    return failures


def served(ws):
    """With --server: the hook servers the hooks started (their sockets are under TMPDIR, which
    base_env puts in the run's folder) must have answered events, and are stopped here. Each
    lock file says `PID EVENTS`."""
    servers = []
    for lock in (ws.root / "tmp").glob("leakhound-*/hook-*.lock"):
        pid, events = lock.read_text().split()
        servers.append((int(pid), int(events)))
        try:
            os.kill(int(pid), signal.SIGTERM)
        except ProcessLookupError:
            pass
    print(f"  hook servers (pid, events answered): {servers}")
    if not any(events for _, events in servers):
        return [f"--server: no hook server answered an event ({servers})"]
    return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", required=True, choices=sorted(AGENTS))
    ap.add_argument("--leakhound", required=True)
    ap.add_argument("--bin-dir", required=True, type=Path)
    ap.add_argument("--mode", default="both", choices=["bare", "protected", "both"])
    ap.add_argument("--keep", help="keep each run's HOME, workspace and logs under this folder")
    ap.add_argument("--server", action="store_true",
                    help="protected runs: install the hooks with --server and require that a hook server answered")
    ap.add_argument("--record", type=Path,
                    help="protected runs: append every hook event the agent sends to this JSONL file")
    args = ap.parse_args()
    args.leakhound = str(Path(args.leakhound).resolve())
    args.bin_dir = args.bin_dir.resolve()
    if args.record:
        args.record = args.record.resolve()
    agent = AGENTS[args.agent]()
    version = subprocess.run([str(args.bin_dir / agent.bin), "--version"], capture_output=True, text=True,
                             timeout=60).stdout.strip().splitlines()
    print(f"{agent.name}: {version[0] if version else '(no version)'}")
    failures = []
    for protected in {"bare": [False], "protected": [True], "both": [False, True]}[args.mode]:
        failures += check(agent, args, protected)
    for f in failures:
        print(f"FAIL {agent.name}: {f}")
    print(f"{agent.name}: {'ok' if not failures else f'{len(failures)} failed'}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
