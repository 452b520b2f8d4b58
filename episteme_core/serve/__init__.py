"""``episteme serve``: the read commands as MCP tools over streamable HTTP, safe by default.

Light modules (``tools``, ``calls``, ``shardcache``, ``guards``) import no MCP code; ``mcp`` and
``app`` import the SDK and are loaded only when the server runs.
"""
