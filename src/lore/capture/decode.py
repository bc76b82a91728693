"""Bytes → text for captured pages and files, the way a browser picks the encoding:
byte-order mark, then the charset of the Content-Type header, then a `<meta charset>` /
`<meta http-equiv="Content-Type">` in the head, then UTF-8 if the bytes are valid UTF-8,
then a statistical guess (charset-normalizer, installed with the `capture` extra).

GB2312 and GBK labels decode as GB18030, their superset: real pages labelled gb2312 often
use GBK-only characters, and a browser reads them the same way.
"""

from __future__ import annotations

import codecs
import re

# WHATWG label → decoder this module uses (only where Python's own name differs in effect).
_ALIASES = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "gb_2312-80": "gb18030",
    "csgb2312": "gb18030",
    "chinese": "gb18030",
    "iso-ir-58": "gb18030",
    "big5": "big5hkscs",
    "x-x-big5": "big5hkscs",
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "windows-1252": "cp1252",
    "x-sjis": "shift_jis",
    "unicode": "utf-16le",
    "utf-16": "utf-16le",
}
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16le"),
    (codecs.BOM_UTF16_BE, "utf-16be"),
)
_META_PRESCAN = 16 * 1024
_META_CHARSET = re.compile(
    rb"""<meta[^>]+?charset\s*=\s*["']?\s*([a-zA-Z0-9_.:\-]+)""", re.IGNORECASE | re.DOTALL
)
_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?([^"';\s]+)""", re.IGNORECASE)
_HTML_START = re.compile(
    r"\A\s*(?:<!doctype\s+html|<html|<head|<body|<meta|<title|<article|<div|<p[\s>]|<!--)",
    re.IGNORECASE,
)
_HTML_TAG = re.compile(r"<(?:html|body|head)[\s>]", re.IGNORECASE)


class UndecodableText(ValueError):
    """The bytes are not text in any encoding lore can tell; the message says why."""


def codec_for(label: str | None) -> str | None:
    """Python codec name for a charset label, or None when the label is unknown."""
    if not label:
        return None
    name = label.strip().strip("\"'").lower()
    name = _ALIASES.get(name, name)
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def header_charset(content_type: str | None) -> str | None:
    if not content_type:
        return None
    match = _HEADER_CHARSET.search(content_type)
    return match.group(1) if match else None


def meta_charset(data: bytes) -> str | None:
    """The charset a page declares in its first 16 KB of markup, if any."""
    match = _META_CHARSET.search(data[:_META_PRESCAN])
    return match.group(1).decode("ascii", "replace") if match else None


def _bom(data: bytes) -> tuple[str, int] | None:
    for mark, name in _BOMS:
        if data.startswith(mark):
            return name, len(mark)
    return None


_HAN = re.compile(r"[\u3400-\u9fff]")


def _reads_as_chinese(data: bytes) -> bool:
    """Bytes that are GB18030 (GBK) Chinese: they decode strictly, and their Han characters
    are the common ones (GB2312). Statistical guessers misread short GBK texts as Korean
    (cp949) or Big5, which decode too but into rare characters."""
    try:
        text = data.decode("gb18030")
    except UnicodeDecodeError:
        return False
    han = _HAN.findall(text)
    if not han:
        return False
    common = 0
    for char in han:
        try:
            char.encode("gb2312")
            common += 1
        except UnicodeEncodeError:
            pass
    return common >= 0.9 * len(han)


def _guess(data: bytes) -> str | None:
    if _reads_as_chinese(data[: 256 * 1024]):
        return "gb18030"
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # the capture extra is not installed: no guess
        return None
    best = from_bytes(data[: 256 * 1024]).best()
    return None if best is None else str(best.encoding)


def guessed_encoding(data: bytes, declared: str | None = None, *, html: bool = False) -> str | None:
    """The encoding decode_bytes would guess for these bytes (None when it needs no guess:
    a byte-order mark, a declared charset, valid UTF-8): so a caller can say it guessed."""
    if _bom(data) is not None or codec_for(declared) or _valid_utf8(data):
        return None
    if html and codec_for(meta_charset(data)):
        return None
    return codec_for(_guess(data))


def decode_bytes(data: bytes, declared: str | None = None, *, html: bool = False) -> str:
    """Decode a page or file. `declared` is the charset from a Content-Type header."""
    bom = _bom(data)
    if bom is not None:
        name, skip = bom
        return data[skip:].decode(name, errors="replace")
    if b"\x00" in data[:8192]:
        raise UndecodableText("binary data (contains NUL bytes), not text")
    codecs_in_order = [codec_for(declared), codec_for(meta_charset(data)) if html else None]
    if codecs_in_order[0] == "cp1252" and codecs_in_order[1] is not None:
        # Servers default to "ISO-8859-1" in the header; the page's own meta knows better.
        codecs_in_order.reverse()
    for codec in codecs_in_order:
        if codec is not None:
            # A single-byte label on a UTF-8 page is a common mistake: valid UTF-8 under
            # such a label is read as UTF-8.
            if codec == "cp1252" and _valid_utf8(data):
                return data.decode("utf-8")
            return data.decode(codec, errors="replace")
    if _valid_utf8(data):
        return data.decode("utf-8")
    guessed = codec_for(_guess(data))
    if guessed is not None:
        return data.decode(guessed, errors="replace")
    raise UndecodableText("not UTF-8 and the encoding cannot be told; convert it to UTF-8")


def _valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def looks_like_html(text: str) -> bool:
    """Is this text an HTML document (rather than Markdown or plain text)?"""
    return bool(_HTML_START.match(text) or _HTML_TAG.search(text[:4096]))
