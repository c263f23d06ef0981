"""Embedding providers: the bundled multilingual-e5-small (two engines over the same weights),
Gemini and any litellm model, behind the core's ``Embedder`` protocol (hook
``provide_embedder``). The providers (and numpy) are imported when an embedder is asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lifelong.hookspecs import hookimpl

if TYPE_CHECKING:
    from lifelong.contracts import Embedder, JSONObject, PluginContext


@hookimpl
def provide_embedder(ctx: PluginContext, config: JSONObject) -> Embedder | None:
    from .providers import make_embedder

    return make_embedder(config)
