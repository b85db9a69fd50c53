"""mem: persistent memory for AI coding assistants, over one SQLite file."""

__version__ = "0.1.0"
