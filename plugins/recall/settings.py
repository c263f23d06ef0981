"""The recall plugin's config schema properties and their defaults (plugin.yaml), for the help
texts and tool schemas that quote them, so they cannot drift from what applies. A module of its
own: the commands read it when listed, without importing the index or the search."""

from __future__ import annotations

import sys
from typing import Any

from lifelong.host import load_manifest

PLUGIN = "recall"

CONFIG_PROPERTIES: dict[str, dict[str, Any]] = load_manifest(
    sys.modules[__package__], PLUGIN, check_schema=False
)["config_schema"]["properties"]
DEFAULTS: dict[str, Any] = {key: prop.get("default") for key, prop in CONFIG_PROPERTIES.items()}
