"""The JSON API under /api/v1/: one table of endpoints, each one Vault call with the
caller's principal, answering with the shapes `--json` prints (the library's `to_dict()`
and lore.present). The same table gives the routes and the OpenAPI document.

Reads take their arguments from the query string; writes take a JSON object
(Content-Type: application/json) and need a server started with --allow-write and a token
made with --write. Errors: lore.serve.errors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import AccessError, NotFoundError
from ..retrieve.query import MAX_QUERY_CHARS
from .auth import Identity
from .errors import HTTPError
from .params import Arg

if TYPE_CHECKING:
    from ..vault import Vault
    from .app import Server

PREFIX = "/api/v1"


@dataclass(frozen=True)
class Call:
    vault: Vault
    identity: Identity
    server: Server
    path: str | None = None  # the note path of a /notes/{path} or /links/{path} request

    @property
    def principal(self) -> str | None:
        return self.identity.principal


Run = Callable[[Call, dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str  # after PREFIX; `{path}` is a note path, `{id}` a cluster id
    summary: str
    run: Run
    args: tuple[Arg, ...] = ()
    write: bool = False
    owner_only: bool = False
    status: int = 200


def _limit(default: int, high: int) -> Arg:
    return Arg("limit", "int", default=default, low=1, high=high, description="How many, at most.")


QUERY = Arg("q", required=True, max_chars=MAX_QUERY_CHARS, description="The query, any text.")


def _search(c: Call, a: dict[str, Any]) -> dict[str, Any]:
    result = c.vault.search(
        a["q"],
        limit=a["limit"],
        tags=a["tag"],
        path=a["path"],
        since=a["since"],
        until=a["until"],
        explain=a["explain"],
        mode=a["mode"],
        fusion=a["fusion"],
        principal=c.principal,
        budget_ms=a["budget_ms"],
    )
    return dict(result.to_dict())


def _note(c: Call, a: dict[str, Any]) -> dict[str, Any]:
    return c.vault.note(checked_path(c), principal=c.principal)


def _links(c: Call, a: dict[str, Any]) -> dict[str, Any]:
    return c.vault.links(checked_path(c), principal=c.principal).to_dict()


def checked_path(c: Call) -> str:
    """The note path of the URL, refused before any lookup when it could leave the vault
    (the same reading the write paths get: relative, no `..`, no NUL, no hidden folder)."""
    from ..edit.notes import note_target

    return note_target(c.path or "", "path", write=False)


def _tags(c: Call, a: dict[str, Any]) -> dict[str, Any]:
    from ..present.jsonout import tag_list

    return tag_list(c.vault.tag_counts(principal=c.principal), a["match"], a["limit"])


def _clusters(c: Call, a: dict[str, Any]) -> dict[str, Any]:
    found = c.vault.visible_clusters(principal=c.principal)
    if found is None:
        raise NotFoundError("no interest map yet", hint="run `lore clusters build`")
    return dict(found.to_dict())


def _cluster(c: Call, a: dict[str, Any]) -> dict[str, Any]:
    found = c.vault.visible_clusters(principal=c.principal)
    cluster = (
        None if found is None or not (c.path or "").isdigit() else found.cluster(int(c.path or 0))
    )
    if cluster is None:
        raise NotFoundError(f"no cluster {str(c.path)[:20]!r} in the map")
    return dict(cluster.to_page_dict())


def _status(c: Call, a: dict[str, Any]) -> dict[str, Any]:
    data = c.vault.status(principal=c.principal).to_dict()
    data["server"] = {
        "principal": c.principal,
        "token": c.identity.token,
        "write": c.server.options.allow_write and c.identity.can_write,
        "sync": c.server.freshness.state.__dict__.copy() if c.principal is None else None,
    }
    return data


def _doctor(c: Call, a: dict[str, Any]) -> dict[str, Any]:
    return c.vault.doctor().to_dict()


def _check(c: Call, a: dict[str, Any]) -> dict[str, Any]:
    return c.vault.check(principal=c.principal).to_dict()


def _trash(c: Call, a: dict[str, Any]) -> dict[str, Any]:
    return {"items": [item.to_dict() for item in c.vault.trash(principal=c.principal)]}


def _remember(c: Call, a: dict[str, Any]) -> dict[str, Any]:
    return c.vault.remember(
        a["text"],
        entities=tuple(a["entities"] or ()),
        status=a["status"],
        source=a["source"],
        trust=a["trust"],
        principal=c.principal,
    ).to_dict()


def _ingest(c: Call, a: dict[str, Any]) -> dict[str, Any]:
    """A URL only: a caller of the server never names a file of the server's machine."""
    from ..capture.ingest import CaptureOptions, capture
    from ..capture.urls import check_url

    url = a["url"].strip()
    if not url.lower().startswith(("http://", "https://")):
        raise HTTPError(400, "bad_request", "url: give an http(s) URL (never a file here)")
    url = check_url(url)
    if c.principal is not None:
        raise AccessError("ingest writes into the inbox folder: only the owner's tokens may")
    options = CaptureOptions(
        tags=tuple(a["tags"] or ()),
        title=a["title"],
        force=a["force"],
        allow_private=c.server.options.allow_private_ingest,
    )
    return capture(c.vault, url, options).to_dict()


def _create(c: Call, a: dict[str, Any]) -> dict[str, Any]:
    return c.vault.write_note(a["path"], a["text"], principal=c.principal).to_dict()


def _edit(c: Call, a: dict[str, Any]) -> dict[str, Any]:
    return c.vault.edit_note(
        a["path"],
        base_hash=a["base_hash"],
        text=a["text"],
        append=a["append"],
        section=a["section"],
        principal=c.principal,
    ).to_dict()


def _move(c: Call, a: dict[str, Any]) -> dict[str, Any]:
    return c.vault.move_note(
        a["path"], a["to"], base_hash=a["base_hash"], principal=c.principal
    ).to_dict()


def _delete(c: Call, a: dict[str, Any]) -> dict[str, Any]:
    return c.vault.delete_note(a["path"], base_hash=a["base_hash"], principal=c.principal).to_dict()


def _restore(c: Call, a: dict[str, Any]) -> dict[str, Any]:
    return c.vault.restore_note(a["id"], to=a["to"], principal=c.principal).to_dict()


NOTE_PATH = Arg("path", required=True, max_chars=1024, description="The note's vault path.")
HASH = Arg("base_hash", max_chars=128, description="The note's `hash` when it was read.")
TEXT_CHARS = 4 * 1024 * 1024

ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(
        "GET",
        "/search",
        "Search the notes (the shape of `lore search --json`)",
        _search,
        (
            QUERY,
            _limit(10, 100),
            Arg("tag", "strs", description="Only notes with this tag (repeat)."),
            Arg("path", max_chars=1024, description="Only notes whose path matches this glob."),
            Arg("since", max_chars=40, description="Only notes dated on or after YYYY[-MM[-DD]]."),
            Arg("until", max_chars=40, description="Only notes dated on or before."),
            Arg("mode", choices=("mode1", "mode2", "mode3", "mode4")),
            Arg("fusion", choices=("weighted", "rrf")),
            Arg("explain", "bool", default=False, description="Add each channel's score."),
            Arg(
                "budget_ms",
                "int",
                low=1,
                high=600_000,
                description="Answer within about this many ms; `degraded` lists what was skipped.",
            ),
        ),
    ),
    Endpoint("GET", "/notes/{path}", "One note (the shape of `lore show --json`)", _note),
    Endpoint("GET", "/links/{path}", "A note's links and backlinks (`lore links --json`)", _links),
    Endpoint(
        "GET",
        "/lookup",
        "Ask about a name: L1 card → L2 index → L3 raw scan → L4 not found",
        lambda c, a: c.vault.lookup(a["q"], limit=a["limit"], principal=c.principal).to_dict(),
        (QUERY, _limit(5, 50)),
    ),
    Endpoint(
        "GET",
        "/context",
        "A byte-budgeted briefing for a task",
        lambda c, a: c.vault.context(
            a["task"], budget=a["budget"], principal=c.principal
        ).to_dict(),
        (
            Arg("task", required=True, max_chars=MAX_QUERY_CHARS),
            Arg("budget", "int", default=4096, low=512, high=65536),
        ),
    ),
    Endpoint(
        "GET",
        "/snapshot",
        "A 1-2 KB cold-start summary",
        lambda c, a: c.vault.snapshot(budget=a["budget"], principal=c.principal).to_dict(),
        (Arg("budget", "int", default=2048, low=256, high=16384),),
    ),
    Endpoint(
        "GET",
        "/recent",
        "Entities and notes active lately",
        lambda c, a: c.vault.recent(
            days=a["days"], limit=a["limit"], principal=c.principal
        ).to_dict(),
        (Arg("days", "int", default=7, low=1, high=3650), _limit(20, 200)),
    ),
    Endpoint(
        "GET",
        "/tags",
        "The tags in use with their note counts",
        _tags,
        (Arg("match", max_chars=200), _limit(100, 5000)),
    ),
    Endpoint("GET", "/clusters", "The interest map (`lore clusters show --json`)", _clusters),
    Endpoint("GET", "/clusters/{id}", "One cluster with its notes and map positions", _cluster),
    Endpoint("GET", "/status", "The index, the mode, and this server", _status),
    Endpoint(
        "GET",
        "/doctor",
        "Index health (`lore doctor --json`); owner only",
        _doctor,
        owner_only=True,
    ),
    Endpoint("GET", "/check", "Memory hygiene findings (`lore check --json`)", _check),
    Endpoint("GET", "/trash", "Deleted notes that can be restored", _trash),
    Endpoint(
        "POST",
        "/remember",
        "Write a conclusion into today's daily note",
        _remember,
        (
            Arg("text", required=True, max_chars=64 * 1024),
            Arg("entities", "strs"),
            Arg("status", default="claimed", choices=("claimed", "verified")),
            Arg("source", max_chars=2000),
            Arg("trust", default="inferred", choices=("confirmed", "inferred", "imported")),
        ),
        write=True,
    ),
    Endpoint(
        "POST",
        "/ingest",
        "Capture a web page into the inbox (owner tokens only)",
        _ingest,
        (
            Arg("url", required=True, max_chars=8000),
            Arg("tags", "strs"),
            Arg("title", max_chars=500),
            Arg("force", "bool", default=False),
        ),
        write=True,
    ),
    Endpoint(
        "POST",
        "/notes",
        "Create a note (refused when the path is taken)",
        _create,
        (NOTE_PATH, Arg("text", required=True, max_chars=TEXT_CHARS)),
        write=True,
        status=201,
    ),
    Endpoint(
        "POST",
        "/notes/edit",
        "Edit a note if it still holds `base_hash`: replace its text or a section, or append",
        _edit,
        (
            NOTE_PATH,
            Arg("base_hash", required=True, max_chars=128),
            Arg("text", max_chars=TEXT_CHARS),
            Arg("append", max_chars=TEXT_CHARS),
            Arg("section", max_chars=500),
        ),
        write=True,
    ),
    Endpoint(
        "POST",
        "/notes/move",
        "Move a note to a free path",
        _move,
        (NOTE_PATH, Arg("to", required=True, max_chars=1024), HASH),
        write=True,
    ),
    Endpoint(
        "POST",
        "/notes/delete",
        "Move a note to the trash (restorable)",
        _delete,
        (NOTE_PATH, HASH),
        write=True,
    ),
    Endpoint(
        "POST",
        "/notes/restore",
        "Put a deleted note back",
        _restore,
        (Arg("id", required=True, max_chars=40), Arg("to", max_chars=1024)),
        write=True,
    ),
)
