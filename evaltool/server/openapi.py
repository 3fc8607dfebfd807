"""The API's OpenAPI 3.1 description, built from the view registry (the parameters are declared once)."""

from __future__ import annotations

from evaltool.version import __version__

ERROR = {
    "description": "bad parameters (400) or no such execution (404)",
    "content": {
        "application/json": {
            "schema": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}
        }
    },
}
RECORD = {
    "summary": "Record a result JSON (evaltool QRELS RUN -q -o json) sent by a remote job",
    "description": "Accepted only with the bearer token the server was started with (--token or "
    "EVALTOOL_TOKEN); without one configured the endpoint is off (403).",
    "security": [{"bearer": []}],
    "parameters": [
        {"name": "name", "in": "query", "schema": {"type": "string"}, "description": "the execution's name"},
        {"name": "note", "in": "query", "schema": {"type": "string"}, "description": "a note"},
        {
            "name": "tag",
            "in": "query",
            "schema": {"type": "array", "items": {"type": "string"}},
            "explode": True,
            "description": "KEY=VALUE; repeatable",
        },
        {"name": "at", "in": "query", "schema": {"type": "string"}, "description": "ISO-8601 date (default now)"},
    ],
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "required": ["summary"],
                    "properties": {
                        "summary": {"type": "object"},
                        "per_query": {"type": "object"},
                        "meta": {"type": "object"},
                    },
                }
            }
        },
    },
    "responses": {
        "201": {"description": 'recorded: {"id", "url"}'},
        "400": ERROR,
        "401": {"description": "missing or wrong bearer token"},
        "403": {"description": "recording is off"},
        "413": {"description": "request body over the limit"},
    },
}


def describe(views) -> dict:
    """The OpenAPI document of the JSON addresses of ``views`` plus recording."""
    paths: dict[str, dict] = {}
    for view in views:
        path = view.api
        paths.setdefault(path, {})["get"] = {
            "summary": view.summary,
            "operationId": view.name,
            "parameters": [param.openapi() for param in view.params],
            "responses": {
                "200": {"description": view.summary, "content": {"application/json": {}}},
                "400": ERROR,
                "404": ERROR,
            },
        }
    paths.setdefault("/api/executions", {})["post"] = RECORD
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "evaltool dashboard",
            "version": __version__,
            "description": "The evaluation history of evaltool: the same numbers as 'evaltool history ... -o json'.",
        },
        "paths": paths,
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    }
