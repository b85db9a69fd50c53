"""Slimmer JSON schemas for tools/list: every byte there is context a client pays for on every turn.

pydantic spells an optional string ``{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,
"title":"Kind"}``; an omitted argument means the same as null, so ``{"type":"string"}`` says it
in a third of the bytes. Titles repeat the property names and go too. Validation is unchanged:
the server still checks arguments against the full pydantic model.
"""

from __future__ import annotations

from typing import Any


def compact(schema: Any) -> Any:
    """Drop titles and collapse nullable optionals.

    >>> compact({"title": "X", "properties": {"k": {"anyOf": [{"type": "string"}, {"type": "null"}],
    ...          "default": None, "title": "K"}}})
    {'properties': {'k': {'type': 'string'}}}
    """
    if isinstance(schema, list):
        return [compact(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    # "additionalProperties": true is the JSON Schema default: saying it costs bytes, not meaning.
    out = {k: compact(v) for k, v in schema.items()
           if not (k == "title" and isinstance(v, str)) and not (k == "additionalProperties" and v is True)}
    if "properties" in schema and isinstance(schema["properties"], dict):
        out["properties"] = {name: compact(value) for name, value in schema["properties"].items()}
    options = out.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options and out.get("default", None) is None:
        rest = [o for o in options if o != {"type": "null"}]
        if len(rest) == 1:
            del out["anyOf"]
            out.pop("default", None)
            out = {**rest[0], **out}
    return out


def slim(server: Any, name: str) -> None:
    """Compact one registered tool's input and output schemas in place; the input schema says that
    unknown arguments are refused (``strict`` makes the argument model refuse them)."""
    tool = server._tool_manager.get_tool(name)  # the SDK exposes no public setter
    if tool is None:
        return
    tool.parameters = {**compact(tool.parameters), "additionalProperties": False}
    if tool.fn_metadata.output_schema is not None:
        tool.fn_metadata.output_schema = compact(tool.fn_metadata.output_schema)
        tool.__dict__.pop("output_schema", None)


def strict(server: Any, name: str) -> None:
    """Validate one tool's arguments strictly: ``layer: true`` or ``pinned: "yes"`` is an error, not 1 or True,
    and an unknown argument (a misspelt ``limit``) is an error, not ignored.

    pydantic's lax mode would turn a JSON ``true`` into the integer 1 before any mem code sees it,
    so the gate (``mem.gate``) could not refuse the confusion; a strict subclass of the SDK's
    argument model keeps every conversion but int -> float.
    """
    from pydantic import ConfigDict

    tool = server._tool_manager.get_tool(name)
    if tool is None:
        return
    model = tool.fn_metadata.arg_model
    strict_model = type(model.__name__, (model,), {"model_config": ConfigDict(**{**model.model_config, "strict": True, "extra": "forbid"}),
                                                   "__module__": model.__module__})
    tool.fn_metadata.arg_model = strict_model
