"""Sphinx configuration for the shedproto docs (build: ``sphinx-build -n -W docs build``)."""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.errors import PycodeError
from sphinx.ext.autodoc.mock import mock
from sphinx.pycode import ModuleAnalyzer
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

# ``-n`` (nitpicky, as .ci/run builds): every reference must resolve. There is no network here,
# so no intersphinx inventory can be fetched: names from the standard library and the runtime
# dependencies (msgspec, anyio, typing-extensions) and pytest stay plain text instead of links.
# Only those modules are ignored; a reference to one of our own names must resolve.
nitpick_ignore_regex = [
    (
        r"py:(class|exc|meth|func|data|attr|obj)",
        r"(collections(\.abc)?|os|pathlib|socket|subprocess|sqlite3|concurrent\.futures|"
        r"_thread|typing|typing_extensions|contextlib|asyncio|"
        r"anyio(\.\w+)*|msgspec(\.\w+)*|pytest|_pytest(\.\w+)*)\.[\w.]+",
    ),
    (r"py:meth", r"str\.\w+"),
    # SwiftEnum("RcKind") and the like in desktop field annotations name the mac app's Swift
    # types, not ours.
    (
        r"py:class",
        r"RcKind|RcState|ScreenshotSurface|ApprovalDecision|ApprovalScope|ApprovalMethod|"
        r"SSHApprovalPolicy|PolicyScope|PolicyAction|PolicyGate",
    ),
    # Annotations imported under TYPE_CHECKING render with their short names.
    (r"py:class", r"Path|BlockingPortal"),
    # The constraints of the herdr types' ``Annotated[int, msgspec.Meta(ge=0, ...)]`` render as
    # cross-reference text: the keyword arguments, and the pieces of the one ``pattern``
    # (``PopupSize``'s ``'^(100|[1-9][0-9]?)%$'``), which the type splitter cuts apart.
    (r"py:class", r"(ge|le|gt|lt|min_length|max_length)=-?\d+|pattern='\^|100|1-9|0-9|\?|%\$'"),
    # Type variables of generic classes and functions are not documented objects.
    (r"py:class", r"([\w.]+\.)?(S|T|A|R|_T|ServerT|PosArgsT)"),
]

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


def _no_inline_attribute_type(  # noqa: PLR0917 (the signature of the Sphinx event)
    app: Sphinx, what: str, name: str, obj: object, options: object, lines: list[str]
) -> None:
    """Keep napoleon from reading an attribute docstring's ``Label: text`` as ``type: text``.

    Attribute types come from annotations; a docstring such as ``Lost twice: the outcome is
    unknown`` is prose. Napoleon takes the text before the first colon of an attribute's
    first line as its type, so such a docstring gets an empty reST comment (``..``) as its
    first line: napoleon reads no type from it, and it renders as nothing.
    """
    if what in {"attribute", "data", "property"} and lines and ":" in lines[0]:
        lines[:0] = ["..", ""]


MODULE_ALIASES = {"t": "shedproto.herdr.types"}
"""Module aliases that annotations use (``from shedproto.herdr import types as t``)."""

SHARED_NAMES = {
    "LineSkipped": "shedproto.LineSkipped",
    "SessionMode": "shedproto.herdr.SessionMode",
}
"""Short names that annotations in other modules use, and where each is documented once
(names a protocol package re-exports from the shared core; herdr's session modes)."""


def _resolve_module_alias(
    app: Sphinx, env: BuildEnvironment, node: addnodes.pending_xref, contnode: nodes.Element
) -> nodes.Element | None:
    """Resolve ``t.Request`` as ``shedproto.herdr.types.Request``, a shared name as the core's.

    Other targets are left alone (and warned about).
    """
    reftarget = str(node.get("reftarget", ""))
    head, dot, rest = reftarget.partition(".")
    last = reftarget.rpartition(".")[2]
    if node.get("refdomain") != "py":
        return None
    if dot and head in MODULE_ALIASES:
        target = f"{MODULE_ALIASES[head]}.{rest}"
    elif last in SHARED_NAMES:
        target = SHARED_NAMES[last]
    elif node["reftype"] in {"meth", "attr"} and not dot and node.get("py:class"):
        return _resolve_inherited(app, env, node, contnode, reftarget)
    else:
        return None
    domain = env.get_domain("py")
    return domain.resolve_xref(
        env, node["refdoc"], app.builder, node["reftype"], target, node, contnode
    )


def _reexported_data_docs(app: Sphinx) -> None:
    """Give a package the docstrings of the constants its ``__all__`` re-exports.

    A public package re-exports constants and type aliases (``CATALOGUE``,
    ``SUPPORTED_PROTOCOLS``, ...) from its private modules, where their docstrings are.
    autodoc documents a module-level value only when the documented module's own source has
    a docstring for it, so each package's source analysis is given the docstring of the
    private module that defines the value (the same object under the same name), or an
    empty one where it has none.
    """
    documented = sorted(
        {
            line.split("::", 1)[1].strip()
            for page in Path(app.srcdir).rglob("*.md")
            for line in page.read_text(encoding="utf-8").splitlines()
            if line.startswith(".. automodule::")
        }
    )
    for package_name in documented:
        with mock(app.config.autodoc_mock_imports):  # as autodoc imports it
            package = importlib.import_module(package_name)
        analyzer = ModuleAnalyzer.for_module(package_name)
        attr_docs = analyzer.find_attr_docs()
        for name in getattr(package, "__all__", ()):
            value = package.__dict__.get(name)
            if ("", name) in attr_docs or value is None or inspect.isclass(value):
                continue
            if inspect.isroutine(value) or inspect.ismodule(value):
                continue
            for module_name, module in list(sys.modules.items()):
                if not module_name.startswith(package_name + ".") or module is None:
                    continue
                if module.__dict__.get(name) is not value:
                    continue
                try:
                    source_docs = ModuleAnalyzer.for_module(module_name).find_attr_docs()
                except PycodeError:
                    continue
                if ("", name) in source_docs:
                    attr_docs["", name] = source_docs["", name]
                    break
            else:  # documented like any other member without a docstring (undoc-members)
                attr_docs["", name] = [""]


def _resolve_inherited(
    app: Sphinx,
    env: BuildEnvironment,
    node: addnodes.pending_xref,
    contnode: nodes.Element,
    name: str,
) -> nodes.Element | None:
    """Resolve ``:meth:`data_to_send``` in a class's docstring as the base class's method."""
    module = sys.modules.get(str(node.get("py:module")))
    owner: Any = module
    for part in str(node["py:class"]).split("."):
        owner = getattr(owner, part, None)
    if not inspect.isclass(owner):
        return None
    domain: Any = env.get_domain("py")
    for base in owner.__mro__[1:]:
        if name not in vars(base):
            continue
        suffix = f".{base.__qualname__}.{name}"
        for target in sorted(t for t in domain.objects if t.endswith(suffix)):
            found = domain.resolve_xref(
                env, node["refdoc"], app.builder, node["reftype"], target, node, contnode
            )
            if found is not None:
                return cast("nodes.Element", found)
    return None


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
    """Register the CLI reference directive, the docstring hooks and the alias resolver."""
    app.add_directive("shedproto-cli-help", CliHelp)
    app.connect("autodoc-process-docstring", _link_docs_paths)
    # Before napoleon (priority 500) turns the docstring into reST.
    app.connect("autodoc-process-docstring", _no_inline_attribute_type, priority=400)
    app.connect("missing-reference", _resolve_module_alias)
    app.connect("builder-inited", _reexported_data_docs)
