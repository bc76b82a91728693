"""lore's version, here at the bottom of the layers so that any module may name it (the
fetcher's User-Agent, the MCP handshake, the OpenAPI page); `lore.__version__` is this."""

__version__ = "0.1.0"
