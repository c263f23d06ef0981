"""Embedding providers: the bundled multilingual-e5-small (two engines over the same weights),
Gemini and any litellm model, behind the core's ``Embedder`` protocol (hook
``provide_embedder``)."""

from __future__ import annotations

from lifelong.contracts import Embedder, JSONObject
from lifelong.hookspecs import hookimpl
from lifelong.host import Context

from .providers import make_embedder


@hookimpl
def provide_embedder(ctx: Context, config: JSONObject) -> Embedder | None:
    return make_embedder(config)
