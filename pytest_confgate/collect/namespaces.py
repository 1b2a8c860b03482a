"""A module's namespace and file, read without running any code of the program's.

``sys.modules`` holds what the program put there: a module whose class answers attribute
questions itself (``importlib.util.LazyLoader``'s modules load on the first one), or any
object at all. ``getattr(module, "__file__")``, ``vars(module)`` and even ``isinstance``
(which asks a foreign object for its ``__class__``) run that code: a lazy module then loads
when the gate looks, not when the program uses it, and its lines count where ``coverage run``
counts none. These read the module object's own dictionary, as the interpreter keeps it.
"""

from __future__ import annotations

from types import ModuleType


def namespace(module: object) -> dict[str, object] | None:
    """The namespace of ``module`` if it is a module (its class's code not consulted)."""
    if not issubclass(type(module), ModuleType):
        return None
    try:
        found = object.__getattribute__(module, "__dict__")
    except AttributeError:
        return None
    return found if type(found) is dict else None


def module_file(module: object) -> str | None:
    """``module.__file__`` when it is a string, read as ``namespace`` reads."""
    found = (namespace(module) or {}).get("__file__")
    return found if isinstance(found, str) else None
