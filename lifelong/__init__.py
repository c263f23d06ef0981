"""lifelong: a memory that deepens over months, as plugins over plain markdown files."""

__version__ = "0.1.0"
