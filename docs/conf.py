"""Sphinx configuration for the shedproto documentation (build: ``sphinx-build -W docs build``)."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Iterator

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

import shedproto

project = "shedproto"
author = "the shedproto authors"
copyright = "the shedproto authors"
release = shedproto.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
]

# Guide pages are Markdown (MyST); the API reference renders the docstrings, which are reST.
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "examples/README.md"]
myst_heading_anchors = 3

# The API reference: every name in each module's ``__all__`` (documented or not), in source
# order, type hints in the description rather than in long signatures.
autodoc_default_options = {"members": True, "undoc-members": True, "member-order": "bysource"}
autodoc_typehints = "description"
autodoc_typehints_format = "short"
# The PostgreSQL target needs the ``postgres`` extra (psycopg), which the docs build does not
# install; its API page renders from the docstrings against a stand-in module.
autodoc_mock_imports = ["psycopg"]
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True  # "Attributes:" sections as fields, not second descriptions of members
add_module_names = False
# A bare annotation such as ``type`` also matches every attribute named ``type``; Sphinx picks
# the builtin, which is right, but warns. Only that ambiguity warning is silenced.
suppress_warnings = ["ref.python"]

html_theme = "furo"
html_title = f"shedproto {release}"
html_static_path = ["_static"]
html_css_files = ["shedproto.css"]
pygments_style = "friendly"
pygments_dark_style = "monokai"


def _command_help(path: list[str], parser: argparse.ArgumentParser) -> Iterator[tuple[str, str]]:
    """Yield ``(command line, --help text)`` for ``parser`` and every sub-command below it."""
    yield " ".join(path), parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) not in seen:  # aliases share one parser
                    seen.add(id(sub))
                    yield from _command_help([*path, name], sub)


DOCS_PATH = re.compile(r"``docs/([\w/.-]+)\.(?:rst|md)``")


def _link_docs_paths(  # noqa: PLR0917 (the signature of the Sphinx event)
    app: Sphinx, what: str, name: str, obj: object, options: object, lines: list[str]
) -> None:
    """Turn a docstring's ``docs/PAGE.md`` pointer into a link to that page.

    Docstrings point at their decision pages by path, which reads well in the source; the
    site shows the same pointer as a link.
    """
    lines[:] = [DOCS_PATH.sub(r":doc:`/\1`", line) for line in lines]


class CliHelp(SphinxDirective):
    """``.. shedproto-cli-help::``: every command's ``--help``, read from the parser at build time.

    The reference cannot drift from the CLI: it is the CLI's own output.
    """

    def run(self) -> list[nodes.Node]:
        """Return one section per command: its command line as the title, its help below."""
        from shedproto.clients.cli import build_parser

        os.environ["COLUMNS"] = "92"  # argparse wraps to the terminal width
        sections: list[nodes.Node] = []
        for command, text in _command_help(["shedproto"], build_parser()):
            section = nodes.section(ids=[nodes.make_id(command)], names=[command])
            section += nodes.title(text=command)
            section += nodes.literal_block(text, text, language="text")
            self.state.document.note_implicit_target(section)
            sections.append(section)
        return sections


def setup(app: Sphinx) -> None:
    """Register the CLI reference directive and the docstring link hook."""
    app.add_directive("shedproto-cli-help", CliHelp)
    app.connect("autodoc-process-docstring", _link_docs_paths)
