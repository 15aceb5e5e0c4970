"""What LangGraph's server API tells about an assistant's graph, computed from the loaded
graph as LangGraph's own server computes it, through the runner's Call:

| method | argument | result |
|---|---|---|
| `langgraph.graph` | `{"xray": bool or int}` | the drawable graph's JSON (`nodes`, `edges`) |
| `langgraph.schemas` | `{}` | `{input_schema, output_schema, state_schema, config_schema, context_schema}` |
| `langgraph.subgraphs` | `{"namespace": str or null, "recurse": bool}` | `{namespace: schemas}` |

A schema the graph cannot describe is null, as from LangGraph's server.
"""

from __future__ import annotations

from typing import Any

from agentengine_runner import CallError
from agentengine_runner.hclog import get_logger

GRAPH = "langgraph.graph"
SCHEMAS = "langgraph.schemas"
SUBGRAPHS = "langgraph.subgraphs"
METHODS = frozenset({GRAPH, SCHEMAS, SUBGRAPHS})

# Keys of the configurable schema that are the server's own, not the graph's.
_SERVER_CONFIG_KEYS = ("__pregel_checkpointer", "__pregel_store", "checkpoint_id", "checkpoint_ns", "thread_id")

log = get_logger()


def _object(arg: Any, method: str) -> dict[str, Any]:
    if arg is None:
        return {}
    if not isinstance(arg, dict):
        raise CallError(f"{method}: the argument is a JSON object")
    return arg


async def call(method: str, arg: Any, graph: Any) -> Any:
    arg = _object(arg, method)
    if method == GRAPH:
        xray = arg.get("xray", False)
        if isinstance(xray, bool) or (isinstance(xray, int) and xray > 0):
            return await drawable(graph, xray)
        raise CallError(f"{GRAPH}: xray is a boolean or a positive depth")
    if method == SCHEMAS:
        return schemas(graph)
    namespace = arg.get("namespace")
    recurse = arg.get("recurse", False)
    if (namespace is not None and not isinstance(namespace, str)) or not isinstance(recurse, bool):
        raise CallError(f"{SUBGRAPHS}: namespace is a string and recurse a boolean")
    try:
        return {ns: schemas(sub) async for ns, sub in graph.aget_subgraphs(namespace=namespace, recurse=recurse)}
    except NotImplementedError:
        raise CallError("The graph does not support visualization") from None


async def drawable(graph: Any, xray: bool | int) -> dict[str, Any]:
    try:
        out: dict[str, Any] = (await graph.aget_graph(xray=xray)).to_json()
    except NotImplementedError:
        raise CallError("The graph does not support visualization") from None
    for node in out.get("nodes", []):
        data = node.get("data")
        if isinstance(data, dict):
            data.pop("id", None)  # the object's import path, as the server leaves it out
    return out


def schemas(graph: Any) -> dict[str, Any]:
    """The graph's JSON schemas; each one it cannot give is None (logged)."""
    out: dict[str, Any] = {}
    for key, get in (
        ("input_schema", lambda: graph.get_input_jsonschema()),
        ("output_schema", lambda: graph.get_output_jsonschema()),
        ("state_schema", lambda: _state_schema(graph)),
        ("config_schema", lambda: _configurable_schema(graph)),
        ("context_schema", lambda: _context_schema(graph)),
    ):
        try:
            out[key] = get()
        except Exception as exc:  # a schema pydantic cannot express
            log.warning("no schema for the graph", extra={"schema": key, "error": str(exc)})
            out[key] = None
    return out


def _state_schema(graph: Any) -> dict[str, Any]:
    """A model of the graph's output channels, each typed by its update type where
    pydantic can describe that (else any)."""
    from pydantic import create_model

    fields: dict[str, Any] = {}
    for name in graph.stream_channels_list:
        typ = graph.channels[name].UpdateType
        try:
            create_model(name, __root__=(typ, None)).model_json_schema()
        except Exception:
            typ = Any
        fields[name] = (typ, None)
    schema: dict[str, Any] = create_model(graph.get_name("State"), **fields).model_json_schema()
    return schema


def _configurable_schema(graph: Any) -> dict[str, Any]:
    """The `configurable` part of the graph's config schema, without the server's keys."""
    from pydantic import TypeAdapter

    model = graph.config_schema()
    fields = getattr(model, "model_fields", None) or {}
    if "configurable" not in fields:
        return {}
    schema: dict[str, Any] = TypeAdapter(fields["configurable"].annotation).json_schema()
    for key in _SERVER_CONFIG_KEYS:
        schema.get("properties", {}).pop(key, None)
    config_type = getattr(graph, "config_type", None)
    if config_type is not None and hasattr(config_type, "__name__"):
        schema["title"] = config_type.__name__
    return schema


def _context_schema(graph: Any) -> Any:
    get = getattr(graph, "get_context_jsonschema", None)
    return get() if get is not None else None
