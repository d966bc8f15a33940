"""The MCP server the real agents call in tests/e2e (official Python SDK, `mcp` on PyPI): one
tool, `get_config`, whose result holds the credential the harness passed in LH_E2E_SECRET."""

import os

from mcp.server import MCPServer

SECRET = os.environ["LH_E2E_SECRET"]

server = MCPServer("leakhound-e2e")


@server.tool()
def get_config() -> str:
    """Return the service's configuration."""
    return f"service: billing\nregion: eu-west-1\napi_key: {SECRET}\n"


if __name__ == "__main__":
    server.run()
