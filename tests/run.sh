#!/usr/bin/env bash
# The test suite on any machine: install what the tests need, then run them.
#
#     tests/run.sh                  # install what is missing, then cargo test --release --tests
#     tests/run.sh --install-only   # only the installs
#     tests/run.sh -- FILTER...     # arguments after -- go to cargo test
#
# Installs from Debian (as root, or through sudo when it is there): git, docker-registry,
# skopeo, htpasswd (apache2-utils), python3 and its venv module, npm. Everything else goes
# under target/, never into the machine's own interpreter or node: from PyPI into a virtual
# environment of the project's, target/venv (made with the machine's `python3 -m venv`), the
# pinned versions below (moto, werkzeug, pre-commit, mcp, kubernetes-validate,
# check-jsonschema, and Jupyter's ipykernel, jupyter_client, pyzmq, nbclient, nbformat); from
# npm into target/agent-types (TypeScript with the Claude Agent SDK's types) and
# target/e2e-agents (the four coding agents the real-agent suite runs). The tests then run
# with target/venv/bin first on PATH, so
# `python3`, `pre-commit` and the rest are the venv's (LEAKHOUND_TEST_VENV names it too).
# The pins are what the tests were written against: moto's error bodies and werkzeug's
# server shape what the validation tests see; the MCP SDK's client and server are what the
# mcp-proxy tests run a session between.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

MOTO=5.2.5
WERKZEUG=3.1.9
PRE_COMMIT=4.7.0
# The hook tests compile Claude Code events and leakhound's answers against the Claude Agent
# SDK's own types (sdk.d.ts, sdk-tools.d.ts) with TypeScript; the SDK's peers are pinned too.
CLAUDE_AGENT_SDK=0.3.333
TYPESCRIPT=5.9.3
ANTHROPIC_SDK=1.15.0
MCP_SDK=1.32.2
ZOD=4.6.7
# The MCP proxy tests run a real session with the official MCP Python SDK.
MCP=2.3.0
# docs/scale/ is checked against the published schemas: Kubernetes' (kubernetes-validate
# bundles them) and GitHub Actions' and GitLab CI's (vendored in check-jsonschema).
KUBERNETES_VALIDATE=1.37.0
CHECK_JSONSCHEMA=0.39.0
# The kernel tests run a real ipykernel behind the proxy and drive it with jupyter_client and
# nbclient: their wire protocol (and ipykernel's capture of fd 1) is what the proxy relays.
IPYKERNEL=7.4.0
JUPYTER_CLIENT=8.10.0
PYZMQ=27.3.0
NBCLIENT=0.11.0
NBFORMAT=5.11.1
# The real-agent suite (tests/it/real_agents.rs, tests/e2e/) runs the agents themselves, from
# npm, against a fake model on 127.0.0.1. Pinned: Claude Code before 2.1.121 ignores a hook's
# rewritten tool output, and npm's cache can serve an old one.
CLAUDE_CODE=2.1.332
CODEX=0.171.0
GEMINI_CLI=0.61.0
COPILOT_CLI=1.0.102

install_only=false
cargo_args=()
while (($#)); do
  case "$1" in
    --install-only) install_only=true ;;
    --) shift; cargo_args=("$@"); break ;;
    *) echo "tests/run.sh: unknown argument $1 (use --install-only, or -- FILTER)" >&2; exit 2 ;;
  esac
  shift
done

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "tests/run.sh: need root (or sudo) to run: $*" >&2; return 1
  fi
}

need_apt=()
command -v mkfifo >/dev/null || need_apt+=(coreutils)
command -v git >/dev/null || need_apt+=(git)
# The filter and validation tests drive leakhound with small Python programs, run by the
# project's venv; Debian ships `venv` (with ensurepip) apart from python3 itself.
command -v python3 >/dev/null || need_apt+=(python3)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need_apt+=(python3-venv)
# The image tests push to a real registry (with htpasswd auth) with skopeo.
command -v docker-registry >/dev/null || need_apt+=(docker-registry)
command -v skopeo >/dev/null || need_apt+=(skopeo)
command -v htpasswd >/dev/null || need_apt+=(apache2-utils)
# --validate-hosts logs into a real PostgreSQL server (initdb and postgres, run by the test).
command -v initdb >/dev/null || compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null \
  || need_apt+=(postgresql)
# npm (with Node.js) for the TypeScript type check of the agent hook answers.
command -v npm >/dev/null || need_apt+=(npm)
if ((${#need_apt[@]})); then
  echo "tests/run.sh: installing from Debian: ${need_apt[*]}" >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# From PyPI, into the project's venv: the pre-commit framework, moto's server (STS and IAM)
# for the validation tests, the MCP SDK, Jupyter's kernel and clients, the schema checkers.
# A venv whose interpreter no longer runs (the machine's python3 was upgraded or removed) is
# made again rather than repaired.
venv="$PWD/target/venv"
"$venv/bin/python3" -c '' >/dev/null 2>&1 || {
  echo "tests/run.sh: making the test venv $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
}
vpy="$venv/bin/python3"
have_versions() {
  "$vpy" - "$@" <<'EOF' 2>/dev/null
import sys
from importlib.metadata import version
import flask, flask_cors  # moto's [server] extra
sys.exit(any(version(p) != v for p, v in (a.split("==") for a in sys.argv[1:])))
EOF
}
pins=("moto==$MOTO" "werkzeug==$WERKZEUG" "pre-commit==$PRE_COMMIT" "mcp==$MCP"
  "kubernetes-validate==$KUBERNETES_VALIDATE" "check-jsonschema==$CHECK_JSONSCHEMA"
  "ipykernel==$IPYKERNEL" "jupyter_client==$JUPYTER_CLIENT" "pyzmq==$PYZMQ"
  "nbclient==$NBCLIENT" "nbformat==$NBFORMAT")
have_versions "${pins[@]}" || {
  echo "tests/run.sh: installing from PyPI into $venv: ${pins[*]}" >&2
  "$vpy" -m pip install -q --disable-pip-version-check --require-virtualenv \
    "moto[server]==$MOTO" "${pins[@]:1}"
}
for tool in pre-commit kubernetes-validate check-jsonschema; do
  [ -x "$venv/bin/$tool" ] || {
    echo "tests/run.sh: $tool is missing from $venv/bin after the install" >&2
    exit 1
  }
done
# Every test, and every program a test starts (leakhound run -- python3, a kernel spec's
# python3, pre-commit's hooks), finds the venv's tools first.
export PATH="$venv/bin:$PATH" LEAKHOUND_TEST_VENV="$venv"
# From npm, into target/agent-types (outside the sources, where tests/it/hooks.rs looks):
# TypeScript and the Claude Agent SDK's types, without its optional native binaries.
types=target/agent-types/node_modules
grep -qs "\"version\": \"$CLAUDE_AGENT_SDK\"" "$types/@anthropic-ai/claude-agent-sdk/package.json" \
  && grep -qs "\"version\": \"$TYPESCRIPT\"" "$types/typescript/package.json" \
  || {
    echo "tests/run.sh: installing from npm: typescript@$TYPESCRIPT @anthropic-ai/claude-agent-sdk@$CLAUDE_AGENT_SDK" >&2
    npm install --prefix target/agent-types --no-audit --no-fund --omit=optional --silent \
      "typescript@$TYPESCRIPT" "@anthropic-ai/claude-agent-sdk@$CLAUDE_AGENT_SDK" \
      "@anthropic-ai/sdk@$ANTHROPIC_SDK" "@modelcontextprotocol/sdk@$MCP_SDK" "zod@$ZOD"
  }
# ---- agents: the real coding agents, from npm, into target/e2e-agents (tests/e2e/agents.py)
agents_dir=target/e2e-agents
agents_pins=("@anthropic-ai/claude-code@$CLAUDE_CODE" "@openai/codex@$CODEX"
  "@google/gemini-cli@$GEMINI_CLI" "@github/copilot@$COPILOT_CLI")
agents_have() {
  local spec name version
  for spec in "${agents_pins[@]}"; do
    name=${spec%@*} version=${spec##*@}
    grep -qs "\"version\": \"$version\"" "$agents_dir/node_modules/$name/package.json" || return 1
  done
}
agents_have || {
  echo "tests/run.sh: installing from npm: ${agents_pins[*]}" >&2
  mkdir -p "$agents_dir"
  [ -f "$agents_dir/package.json" ] || echo '{"private": true}' >"$agents_dir/package.json"
  npm install --prefix "$agents_dir" --no-audit --no-fund --silent "${agents_pins[@]}"
}
# ---- end agents

command -v cargo >/dev/null || { echo "tests/run.sh: cargo is required (a rustup toolchain)" >&2; exit 1; }

$install_only && exit 0
# --tests: the unit tests and tests/it, without building the examples (corpus generators) as
# release binaries too, each a full optimised link; `cargo clippy --all-targets` checks that
# they compile. The library has no doc tests.
exec cargo test --release --locked --tests "${cargo_args[@]}"
