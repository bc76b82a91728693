"""lore links / lore note write|edit|move|delete|restore|trash: a note's links and
backlinks, and changing notes through the same library calls the server and MCP use."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from . import open_from_options, vault_options

if TYPE_CHECKING:
    from ..edit.notes import NoteChange
from .memory import principal_option


def _text(value: str) -> str:
    """TEXT, or standard input for "-"."""
    return sys.stdin.read() if value == "-" else value


def _emit_change(change: NoteChange, as_json: bool) -> None:
    from ..present.jsonout import dumps

    if as_json:
        click.echo(dumps(change.to_dict()))
        return
    where = f"{change.moved_from} → {change.path}" if change.moved_from else change.path
    extra = f" (trash id {change.trash_id})" if change.trash_id else ""
    indexed = "" if change.indexed or change.hash is None else " (not indexed yet)"
    click.echo(f"{change.action}: {where}{extra}{indexed}")
    if change.hash:
        click.echo(f"hash: {change.hash}")


@click.command("links")
@click.argument("note")
@principal_option
@vault_options
def links_cmd(
    note: str, principal: str | None, vault_opt: str | None, db: str | None, as_json: bool
) -> None:
    """A note's outgoing [[links]] (where each resolves) and the notes linking to it."""
    from ..present.jsonout import dumps

    with open_from_options(vault_opt, db) as opened:
        report = opened.links(opened.relative_path(note), principal=principal)
    if as_json:
        click.echo(dumps(report.to_dict()))
        return
    click.echo(f"{report.path}")
    click.echo(f"links ({len(report.outgoing)}):")
    for link in report.outgoing:
        click.echo(f"  [[{link.target}]] → {link.path or '(no such note)'}")
    click.echo(f"backlinks ({len(report.backlinks)}):")
    for back in report.backlinks:
        click.echo(f"  {back.path}  {back.title}  ({back.date or 'undated'})")


@click.group("note")
def note_group() -> None:
    """Write, edit, move, delete (to the trash) and restore notes. Edits name the content
    they change (--hash, as `lore show --json` prints it): a note changed since is refused."""


@note_group.command("write")
@click.argument("path")
@click.argument("text")
@principal_option
@vault_options
def note_write(
    path: str,
    text: str,
    principal: str | None,
    vault_opt: str | None,
    db: str | None,
    as_json: bool,
) -> None:
    """Create the note PATH with TEXT ("-": standard input); refused when it exists."""
    with open_from_options(vault_opt, db) as opened:
        change = opened.write_note(path, _text(text), principal=principal)
    _emit_change(change, as_json)


@note_group.command("edit")
@click.argument("path")
@click.option("--hash", "base_hash", required=True, help="The note's hash when you read it.")
@click.option("--append", "append_text", default=None, help='Text to append ("-": stdin).')
@click.option("--text", "text", default=None, help='The new text ("-": stdin).')
@click.option("--section", default=None, help="Only this section (by its heading).")
@principal_option
@vault_options
def note_edit(
    path: str,
    base_hash: str,
    append_text: str | None,
    text: str | None,
    section: str | None,
    principal: str | None,
    vault_opt: str | None,
    db: str | None,
    as_json: bool,
) -> None:
    """Append to the note (or a section), or replace its text (or a section's)."""
    if (append_text is None) == (text is None):
        raise click.UsageError("give --append or --text (one of them)")
    with open_from_options(vault_opt, db) as opened:
        change = opened.edit_note(
            path,
            base_hash=base_hash,
            text=None if text is None else _text(text),
            append=None if append_text is None else _text(append_text),
            section=section,
            principal=principal,
        )
    _emit_change(change, as_json)


@note_group.command("move")
@click.argument("path")
@click.argument("to")
@click.option("--hash", "base_hash", default=None, help="Only if it still has this hash.")
@principal_option
@vault_options
def note_move(
    path: str,
    to: str,
    base_hash: str | None,
    principal: str | None,
    vault_opt: str | None,
    db: str | None,
    as_json: bool,
) -> None:
    """Move the note PATH to TO (a free path; folders are made)."""
    with open_from_options(vault_opt, db) as opened:
        change = opened.move_note(path, to, base_hash=base_hash, principal=principal)
    _emit_change(change, as_json)


@note_group.command("delete")
@click.argument("path")
@click.option("--hash", "base_hash", default=None, help="Only if it still has this hash.")
@principal_option
@vault_options
def note_delete(
    path: str,
    base_hash: str | None,
    principal: str | None,
    vault_opt: str | None,
    db: str | None,
    as_json: bool,
) -> None:
    """Move the note PATH to the vault's trash (.lore/trash/); `lore note restore` undoes it."""
    with open_from_options(vault_opt, db) as opened:
        change = opened.delete_note(path, base_hash=base_hash, principal=principal)
    _emit_change(change, as_json)


@note_group.command("restore")
@click.argument("trash_id")
@click.option("--to", default=None, help="Restore to this path instead.")
@principal_option
@vault_options
def note_restore(
    trash_id: str,
    to: str | None,
    principal: str | None,
    vault_opt: str | None,
    db: str | None,
    as_json: bool,
) -> None:
    """Put the deleted note TRASH_ID (see `lore note trash`) back where it was."""
    with open_from_options(vault_opt, db) as opened:
        change = opened.restore_note(trash_id, to=to, principal=principal)
    _emit_change(change, as_json)


@note_group.command("trash")
@principal_option
@vault_options
def note_trash(principal: str | None, vault_opt: str | None, db: str | None, as_json: bool) -> None:
    """The deleted notes that can be restored, newest first."""
    from ..present.jsonout import dumps

    with open_from_options(vault_opt, db) as opened:
        items = opened.trash(principal=principal)
    if as_json:
        click.echo(dumps({"items": [item.to_dict() for item in items]}))
        return
    if not items:
        click.echo("the trash is empty")
    for item in items:
        click.echo(f"{item.id}\t{item.path}\t{item.deleted}")


COMMANDS = [links_cmd, note_group]
