"""The argument reader on its own (no SDK): slips read the one obvious way, everything else
refused with one line naming the tool and the argument; nothing else is ever raised."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lore.mcp.args import ArgumentError, Param, input_schema, lookup_table, normalise
from lore.mcp.read import READ_PARAMS
from lore.mcp.tools import CORE_TOOLS, SEARCH_PARAMS, TAG_PARAMS


def search(raw: Any) -> dict[str, Any]:
    return normalise("search", SEARCH_PARAMS, raw)[0]


def refused(params: tuple[Param, ...], raw: Any, *named: str) -> str:
    with pytest.raises(ArgumentError) as info:
        normalise("tool", params, raw)
    message = str(info.value)
    assert "\n" not in message and message.startswith("tool:")
    for name in named:
        assert name in message, (name, message)
    return message


def test_defaults() -> None:
    assert search({"query": "x"}) == {
        "query": "x",
        "limit": 10,
        "tags": None,
        "path": None,
        "category": None,
        "since": None,
        "until": None,
        "include_undated": False,
        "mode": None,
        "explain": False,
        "budget_ms": None,
    }


@pytest.mark.parametrize(
    "raw",
    [
        {"q": "去重"},
        {"Query": "去重"},
        {"QUERY": "去重"},
        {"queries": "去重"},
        {"text": "去重"},
        {"search_query": "去重"},
        {"searchQuery": "去重"},
        {"search-query": "去重"},
        {"--query": "去重"},
        {"query": ["去重"]},
        {"query": "  去重  "},
        {"q": "去重", "query": "去重"},
    ],
)
def test_query_slips(raw: dict[str, Any]) -> None:
    assert search(raw)["query"] == "去重"


@pytest.mark.parametrize(
    ("raw", "tags"),
    [
        ({"tag": "规则"}, ["规则"]),
        ({"tags": "规则"}, ["规则"]),
        ({"tags": "规则, crm"}, ["规则", "crm"]),
        ({"tags": ["规则", "crm", "规则"]}, ["规则", "crm"]),
        ({"tag": "规则", "tags": ["crm"]}, ["规则", "crm"]),
        ({"label": "规则"}, ["规则"]),
        ({"tags": []}, None),
        ({"tags": None}, None),
        ({"tags": ""}, None),
        ({"tags": [2026]}, ["2026"]),
    ],
)
def test_tag_slips(raw: dict[str, Any], tags: list[str] | None) -> None:
    assert search({"query": "x", **raw})["tags"] == tags


@pytest.mark.parametrize(
    ("value", "limit"),
    [(3, 3), ("3", 3), (" 7 ", 7), (5.0, 5), ("+4", 4), (50, 50)],
)
def test_integer_slips(value: Any, limit: int) -> None:
    assert search({"query": "x", "limit": value})["limit"] == limit
    assert search({"query": "x", "k": value})["limit"] == limit
    assert search({"query": "x", "topK": value})["limit"] == limit


def test_a_limit_above_the_maximum_is_lowered_with_a_notice() -> None:
    args, notices = normalise("search", SEARCH_PARAMS, {"query": "x", "limit": 500})
    assert args["limit"] == 50 and notices == ["limit 500 lowered to its maximum 50"]


@pytest.mark.parametrize(
    ("value", "result"),
    [(True, True), ("true", True), ("Yes", True), (1, True), ("0", False), ("off", False)],
)
def test_boolean_slips(value: Any, result: bool) -> None:
    assert search({"query": "x", "explain": value})["explain"] is result


@pytest.mark.parametrize(
    ("value", "mode"),
    [("mode4", "mode4"), ("MODE4", "mode4"), ("mode 4", "mode4"), ("4", "mode4"), (3, "mode3")],
)
def test_mode_slips(value: Any, mode: str) -> None:
    assert search({"query": "x", "mode": value})["mode"] == mode


def test_other_names_for_read_note() -> None:
    args, _ = normalise("read_note", READ_PARAMS, {"file": "a.md", "startLine": "3", "to_line": 9})
    assert (args["path"], args["start_line"], args["end_line"]) == ("a.md", 3, 9)
    args, _ = normalise("read_note", READ_PARAMS, {"noteId": "ADR-001"})
    assert args["id"] == "ADR-001"


def test_refusals_name_the_tool_and_the_argument() -> None:
    refused(SEARCH_PARAMS, {}, "`query` is required")
    refused(SEARCH_PARAMS, {"query": "   "}, "`query` is required")
    refused(SEARCH_PARAMS, {"query": None}, "`query` is required")
    refused(SEARCH_PARAMS, {"query": "x", "bogus": 1}, "unknown argument 'bogus'", "query")
    refused(SEARCH_PARAMS, {"query": "x", "a": 1, "b": 2}, "unknown arguments 'a', 'b'")
    refused(SEARCH_PARAMS, {"query": "x", "limit": "ten"}, "`limit`", "whole number", "'ten'")
    refused(SEARCH_PARAMS, {"query": "x", "limit": 2.5}, "`limit`", "whole number")
    refused(SEARCH_PARAMS, {"query": "x", "limit": True}, "`limit`", "whole number")
    refused(SEARCH_PARAMS, {"query": "x", "limit": 0}, "`limit`", "at least 1")
    refused(SEARCH_PARAMS, {"query": "x", "explain": "maybe"}, "`explain`", "true or false")
    refused(SEARCH_PARAMS, {"query": "x", "mode": "turbo"}, "`mode`", "mode1", "'turbo'")
    refused(SEARCH_PARAMS, {"query": {"text": "x"}}, "`query`", "string")
    refused(SEARCH_PARAMS, {"query": ["a", "b"]}, "`query`", "string")
    refused(SEARCH_PARAMS, {"query": True}, "`query`", "string")
    refused(SEARCH_PARAMS, {"query": "x", "tags": {"a": 1}}, "`tags`", "list of strings")
    refused(SEARCH_PARAMS, {"query": "x", "tags": [None]}, "`tags`", "list of strings")
    refused(SEARCH_PARAMS, {"q": "a", "query": "b"}, "given twice", "q='a'", "query='b'")
    refused(SEARCH_PARAMS, {"query": "x" * 4001}, "`query` is too long", "4000")
    refused(SEARCH_PARAMS, ["query"], "arguments must be an object")


def test_every_tool_declaration_is_unambiguous() -> None:
    for tool in CORE_TOOLS:
        lookup_table(tool.params)  # raises when two parameters share a spelling
        schema = input_schema(tool.params)
        assert "additionalProperties" not in schema  # slips must reach the server
    with pytest.raises(ValueError, match="would name both"):
        lookup_table((Param("tag", "string", "a"), Param("tags", "strings", "b")))


def test_list_tags_reads_query_as_match() -> None:
    args, _ = normalise("list_tags", TAG_PARAMS, {"q": "规则", "limit": "5"})
    assert args == {"match": "规则", "limit": 5}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)
KEYS = st.sampled_from(
    ["query", "q", "limit", "k", "tags", "tag", "path", "since", "until", "mode", "explain"]
) | st.text(max_size=12)


@pytest.mark.parametrize("blank", [[""], [" "], "", None])
def test_a_blank_query_in_a_list_is_a_missing_query(blank: Any) -> None:
    with pytest.raises(ArgumentError, match="`query` is required"):
        normalise("search", SEARCH_PARAMS, {"query": blank})


@given(st.dictionaries(KEYS, JSON, max_size=6))
def test_anything_is_read_or_refused_with_an_argument_error(raw: dict[str, Any]) -> None:
    try:
        args, notices = normalise("search", SEARCH_PARAMS, raw)
    except ArgumentError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("search:")
        return
    assert isinstance(args["query"], str) and args["query"]
    assert 1 <= args["limit"] <= 50
    assert args["tags"] is None or all(isinstance(t, str) and t for t in args["tags"])
    assert args["mode"] in (None, "mode1", "mode2", "mode3", "mode4")
    assert isinstance(args["explain"], bool)
    assert all(isinstance(n, str) for n in notices)
