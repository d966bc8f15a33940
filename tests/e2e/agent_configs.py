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
            "MCP_TIMEOUT": "120000",
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
                # Python and the MCP SDK take seconds to start on a loaded machine; Codex would
                # go on without the server after its default 10 s.
                "startup_timeout_sec = 120",
                # Wait for the server to list its tools before the first turn.
                'startup_readiness = "catalog"',
            ]
        ours.append("# --- end e2e harness")
        if "# --- e2e harness" in old:
            old = old[: old.index("# --- e2e harness")] + old[old.index("# --- end e2e harness") + len("# --- end e2e harness\n"):]
        config.write_text("\n".join(ours) + "\n" + old)
        argv = ["codex", "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json", prompt]
        return argv, {"CODEX_HOME": str(home), "FAKE_MODEL_API_KEY": "fake-key-for-the-fake-model"}


AGENTS["codex"] = Codex


def merge_json(path, update):
    """Write `update`'s keys into the JSON file at `path`, keeping what leakhound's install
    (or anything else) put there."""
    data = json.loads(path.read_text()) if path.exists() else {}
    for k, v in update.items():
        if isinstance(v, dict) and isinstance(data.get(k), dict):
            data[k].update(v)
        else:
            data[k] = v
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))


class Gemini:
    """Gemini CLI: GOOGLE_GEMINI_BASE_URL with an API key, the workspace trusted, `--yolo`."""

    name = "gemini"
    bin = "gemini"
    results_in = tool_results(fake.gemini_results)

    def configure(self, ws, model_url, mcp_servers, prompt, env):
        merge_json(ws.home / ".gemini" / "settings.json", {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            "mcpServers": {name: {"command": argv[0], "args": argv[1:], "env": senv, "trust": True}
                           for name, argv, senv in mcp_servers},
        })
        argv = ["gemini", "-p", prompt, "--yolo", "--output-format", "json"]
        extra = {
            "GOOGLE_GEMINI_BASE_URL": model_url,
            "GEMINI_API_KEY": "fake-key-for-the-fake-model",
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
        }
        return argv, extra


AGENTS["gemini"] = Gemini


class Copilot:
    """Copilot CLI: offline, with a provider of one's own (COPILOT_PROVIDER_BASE_URL)."""

    name = "copilot"
    bin = "copilot"
    # Copilot CLI masks GitHub tokens in what its tools return on its own ("******"), so
    # without leakhound that one cannot be seen reaching the model.
    masks_itself = {"read: GitHub token"}
    results_in = tool_results(fake.chat_results)

    def configure(self, ws, model_url, mcp_servers, prompt, env):
        home = ws.home / ".copilot"
        merge_json(home / "mcp-config.json", {
            "mcpServers": {name: {"type": "local", "command": argv[0], "args": argv[1:], "env": senv, "tools": ["*"]}
                           for name, argv, senv in mcp_servers},
        })
        argv = ["copilot", "-p", prompt, "--allow-all-tools", "--no-color", "--log-level", "none"]
        extra = {
            "COPILOT_HOME": str(home),
            "COPILOT_OFFLINE": "true",
            "COPILOT_PROVIDER_BASE_URL": model_url + "/v1",
            "COPILOT_PROVIDER_API_KEY": "fake-key-for-the-fake-model",
            "COPILOT_MODEL": "fake-model",
        }
        return argv, extra


AGENTS["copilot"] = Copilot
