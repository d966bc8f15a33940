"""How each real agent is pointed at the fake model and run headless (tests/e2e/agents.py).

Each agent class has `name` (leakhound's name for it), `bin` (its command in the npm bin
folder), `configure(ws, model_url, mcp_servers, prompt, env)` returning (argv, extra env) after
writing whatever settings files the agent reads, and `results_in(body)`: how many tool results
a request body to the model carries (to tell whether the agent got through the script).
"""

import json

import model as fake


def tool_results(counter):
    def results_in(body):
        try:
            return counter(json.loads(body))
        except (ValueError, AttributeError, TypeError):
            return 0

    return staticmethod(results_in)


class Claude:
    """Claude Code: ANTHROPIC_BASE_URL; root needs IS_SANDBOX=1 for
    --dangerously-skip-permissions; MCP tools are offered directly only with
    ENABLE_TOOL_SEARCH=false."""

    name = "claude"
    bin = "claude"
    results_in = tool_results(fake.anthropic_results)

    def configure(self, ws, model_url, mcp_servers, prompt, env):
        config = {"mcpServers": {name: {"type": "stdio", "command": argv[0], "args": argv[1:], "env": senv}
                                 for name, argv, senv in mcp_servers}}
        path = ws.root / "mcp.json"
        path.write_text(json.dumps(config, indent=2))
        argv = [
            "claude", "-p", prompt,
            "--dangerously-skip-permissions",
            "--mcp-config", str(path),
            "--strict-mcp-config",
            "--output-format", "json",
        ]
        extra = {
            "ANTHROPIC_BASE_URL": model_url,
            "ANTHROPIC_API_KEY": "fake-key-for-the-fake-model",
            "IS_SANDBOX": "1",
            "ENABLE_TOOL_SEARCH": "false",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }
        return argv, extra


AGENTS = {"claude": Claude}


def toml_str(s):
    return json.dumps(s)  # a TOML basic string is a JSON string for what is written here


class Codex:
    """Codex: a `[model_providers.X]` with `base_url` and `wire_api = "responses"` in
    $CODEX_HOME/config.toml; `codex exec` headless, approvals and sandbox off."""

    name = "codex"
    bin = "codex"
    results_in = tool_results(fake.responses_results)

    def configure(self, ws, model_url, mcp_servers, prompt, env):
        home = ws.home / ".codex"
        home.mkdir(parents=True, exist_ok=True)
        config = home / "config.toml"
        # leakhound's install writes to this file too (hook trust): keep what is there.
        old = config.read_text() if config.exists() else ""
        ours = [
            "# --- e2e harness",
            'model = "fake-model"',
            'model_provider = "fake"',
            "[model_providers.fake]",
            'name = "fake"',
            f"base_url = {toml_str(model_url + '/v1')}",
            'wire_api = "responses"',
            'env_key = "FAKE_MODEL_API_KEY"',
        ]
        for name, argv, senv in mcp_servers:
            ours += [
                f"[mcp_servers.{name}]",
                f"command = {toml_str(argv[0])}",
                f"args = [{', '.join(toml_str(a) for a in argv[1:])}]",
                "env = { " + ", ".join(f"{k} = {toml_str(v)}" for k, v in senv.items()) + " }",
            ]
        ours.append("# --- end e2e harness")
        if "# --- e2e harness" in old:
            old = old[: old.index("# --- e2e harness")] + old[old.index("# --- end e2e harness") + len("# --- end e2e harness\n"):]
        config.write_text("\n".join(ours) + "\n" + old)
        argv = ["codex", "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json", prompt]
        return argv, {"CODEX_HOME": str(home), "FAKE_MODEL_API_KEY": "fake-key-for-the-fake-model"}


AGENTS["codex"] = Codex
