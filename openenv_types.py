"""OpenEnv's base types, without the import of OpenEnv's server stack that comes with them.

`openenv.core.env_server.types` (Action, Observation, State, ...) and `.interfaces`
(Environment) need only pydantic, but importing them the usual way first runs
`openenv/core/__init__.py` and `openenv/core/env_server/__init__.py`, which import OpenEnv's
HTTP server, fastmcp and its Gradio web interface: seconds of CPU that serving this app never
uses. So, when nothing has imported OpenEnv's core yet, the two modules are loaded here under
their own names from their own files, and the two packages above them are registered as lazy
packages (`_LazyPackage`): each runs its real `__init__` the first time one of its own names is
read. The import system's reads (`__path__`, `__spec__`, ...) do not count, so a submodule of
either imports without running its parents' `__init__` on the way: `openenv.core.env_server`'s
modules import `openenv.core.utils`, and running `openenv/core/__init__.py` in the middle of
`env_server`'s own would import the half-built `env_server` (`importlib.util.LazyLoader`
triggers on any read, `__path__` included, and broke exactly so). Whoever imports
`openenv.core` later gets the full package as usual, built around these same two modules, so
`openenv.core.Action is Action` and our models stay subclasses of OpenEnv's types for its
clients and `openenv validate`. If OpenEnv's core is already imported, this is a plain import.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

PACKAGES = ("openenv.core", "openenv.core.env_server")
LIGHT = ("openenv.core.env_server.types", "openenv.core.env_server.interfaces")
"""Imported in this order: interfaces imports types (relatively, so from sys.modules)."""


class _LazyPackage(ModuleType):
    """A package whose `__init__` runs when a name it does not hold yet is first read (module
    `__getattr__` semantics: the attributes the import system set, `__path__` among them, are
    plain reads)."""

    def __getattr__(self, name: str) -> object:
        self.__class__ = ModuleType  # from here on a plain module, as if imported eagerly
        spec = self.__spec__
        assert spec is not None and spec.loader is not None
        spec.loader.exec_module(self)
        return getattr(self, name)


def _load_light_modules() -> None:
    if any(name in sys.modules for name in PACKAGES):
        return  # OpenEnv's core is (being) imported already: the usual import is the right one
    openenv = importlib.import_module("openenv")  # its __init__ imports nothing heavy
    parent: ModuleType = openenv
    search = list(openenv.__path__)
    added: list[str] = []
    try:
        for name in PACKAGES + LIGHT:
            spec = importlib.machinery.PathFinder.find_spec(name, search)
            if spec is None or spec.loader is None:
                raise ImportError(f"no module {name} under {search}")
            lazy = name in PACKAGES
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            added.append(name)
            if lazy:
                module.__class__ = _LazyPackage  # its __init__ runs on first use
            else:
                spec.loader.exec_module(module)
            setattr(parent, name.rpartition(".")[2], module)  # as the import system does
            if lazy:
                parent, search = module, list(spec.submodule_search_locations or ())
    except Exception:  # another OpenEnv layout: undo, and let the usual import do it all
        for name in added:
            sys.modules.pop(name, None)
        if "openenv.core" in added:
            vars(openenv).pop("core", None)


_load_light_modules()

from openenv.core.env_server.interfaces import Environment  # noqa: E402
from openenv.core.env_server.types import (  # noqa: E402
    Action,
    EnvironmentMetadata,
    Observation,
    State,
    WSErrorCode,
)

__all__ = ["Action", "Environment", "EnvironmentMetadata", "Observation", "State", "WSErrorCode"]
