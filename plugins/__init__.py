"""Built-in lifelong plugins, one sub-package each (installed as ``lifelong_plugins``)."""
