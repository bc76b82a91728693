"""The OpenAPI 3.1 document of /api/v1, made from the endpoint table (lore.serve.api), so
it cannot drift from the routes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import __version__
from .api import ENDPOINTS, PREFIX, Endpoint
from .params import Arg

if TYPE_CHECKING:
    from .app import Server

ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
        }
    },
}
_ERRORS = {
    "400": "A bad argument (named in the message)",
    "401": "A token is needed, or it is unknown or revoked",
    "403": "The token's principal or scope does not allow this",
    "404": "No such note, cluster or trash item (or one the token may not see)",
    "409": "The note changed since it was read: nothing written",
    "413": "The body is too large",
    "429": "Too many requests for this token",
}


def _schema(arg: Arg) -> dict[str, Any]:
    kind = {"str": "string", "int": "integer", "bool": "boolean"}.get(arg.kind)
    out: dict[str, Any] = {"type": kind} if kind else {"type": "array", "items": {"type": "string"}}
    if arg.kind == "str":
        out["maxLength"] = arg.max_chars
    if arg.low is not None:
        out["minimum"] = arg.low
    if arg.high is not None:
        out["maximum"] = arg.high
    if arg.choices:
        out["enum"] = list(arg.choices)
    if arg.default is not None:
        out["default"] = arg.default
    if arg.description:
        out["description"] = arg.description
    return out


def _operation(endpoint: Endpoint) -> dict[str, Any]:
    op: dict[str, Any] = {
        "summary": endpoint.summary,
        "operationId": endpoint.method.lower()
        + endpoint.path.replace("/", "_").replace("{", "").replace("}", ""),
        "responses": {
            str(endpoint.status): {
                "description": "The result, in the shape `--json` prints",
                "content": {"application/json": {"schema": {"type": "object"}}},
            },
            **{
                code: {
                    "description": text,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
                    },
                }
                for code, text in _ERRORS.items()
            },
        },
    }
    parameters = []
    if "{path}" in endpoint.path:
        parameters.append(
            {
                "name": "path",
                "in": "path",
                "required": True,
                "description": "The note's path relative to the vault (percent-encoded)",
                "schema": {"type": "string"},
            }
        )
    if "{id}" in endpoint.path:
        parameters.append(
            {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}
        )
    if endpoint.write:
        op["requestBody"] = {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": [a.name for a in endpoint.args if a.required],
                        "properties": {a.name: _schema(a) for a in endpoint.args},
                    }
                }
            },
        }
        op["description"] = "Needs a server started with --allow-write and a --write token."
    else:
        parameters += [
            {
                "name": a.name,
                "in": "query",
                "required": a.required,
                "schema": _schema(a),
                **({"explode": True} if a.kind == "strs" else {}),
            }
            for a in endpoint.args
        ]
    if parameters:
        op["parameters"] = parameters
    return op


def openapi(server: Server | None = None) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for endpoint in ENDPOINTS:
        paths.setdefault(PREFIX + endpoint.path, {})[endpoint.method.lower()] = _operation(endpoint)
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "lore",
            "version": __version__,
            "description": "The JSON API of `lore serve`: every answer runs as the token's"
            " principal; shapes are those of `lore … --json` (docs/json.md).",
        },
        "paths": paths,
        "components": {
            "schemas": {"Error": ERROR},
            "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"token": []}, {}],
    }
    if server is not None and server.options.tokens_required:
        doc["security"] = [{"token": []}]
    return doc
