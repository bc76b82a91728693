"""What every tool is made of: its declaration (ToolSpec), what a call sees (ToolContext),
and the shapes results share. No MCP SDK here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..vault import Vault
from .args import Param

MAX_PATH = 1024  # the longest path argument read


@dataclass
class ToolContext:
    """What a tool call sees: the open vault, the notices to return with its result, and
    the principal it runs as (None: the vault's owner, who sees everything)."""

    vault: Vault
    notices: list[str] = field(default_factory=list)
    principal: str | None = None


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    params: tuple[Param, ...]
    run: Callable[[ToolContext, dict[str, Any]], dict[str, Any]]
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = True
    sync_first: bool = True  # run an incremental sync before the call
    write: bool = False  # offered only when the server allows writes

    def annotations(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "read_only_hint": self.read_only,
            "destructive_hint": self.destructive,
            "idempotent_hint": self.idempotent,
            "open_world_hint": False,
        }
