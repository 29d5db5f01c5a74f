"""The distribution version: the single source that pyproject.toml reads."""

__version__ = "0.1.0"
