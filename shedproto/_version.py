"""The distribution version: the single source that pyproject.toml reads."""

__version__ = "0.2.0"
