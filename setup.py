"""Build shim: maps servers/ and clients/ into the one import package.

setuptools cannot express "every sub-package of servers/, installed under
shedproto.servers" statically, so the package list is computed here. All other
metadata lives in pyproject.toml.
"""

from setuptools import find_packages, setup

MAPPED_ROOTS = {"shedproto.servers": "servers", "shedproto.clients": "clients"}


def _mapped_packages(prefix: str, root: str) -> list[str]:
    return [prefix, *(f"{prefix}.{name}" for name in find_packages(root))]


packages = find_packages(include=["shedproto", "shedproto.*"], exclude=list(MAPPED_ROOTS))
packages = [p for p in packages if not p.startswith(tuple(f"{m}." for m in MAPPED_ROOTS))]
for _prefix, _root in MAPPED_ROOTS.items():
    packages += _mapped_packages(_prefix, _root)

setup(packages=packages, package_dir={"shedproto": "shedproto", **MAPPED_ROOTS})
