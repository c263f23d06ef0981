"""The few named exceptions users can act on. The CLI prints each as one line."""


class LifelongError(Exception):
    """Base class: a problem the user can understand and fix."""


class ConfigError(LifelongError):
    """lifelong.yaml or a plugin manifest is invalid."""


class PluginError(LifelongError):
    """A plugin cannot be loaded (missing manifest, missing schema, bad hooks)."""


class WorkspaceError(LifelongError):
    """The workspace is missing, or a path leaves it, or a file cannot be read."""


class LockedError(LifelongError):
    """Another process holds the workspace lock for this job."""


class InputError(LifelongError):
    """A file or argument cannot be used (binary, not UTF-8, too large, malformed)."""


class LLMOffline(LifelongError):
    """No chat model is configured, or the configured one cannot be reached.

    Callers catch this and use their deterministic offline fallback."""


class LLMTimeout(LLMOffline):
    """The model did not answer before the deadline."""
