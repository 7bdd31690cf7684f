"""Members whose own code raises ``AttributeError``, in classes with ``__getattr__``.

Python calls ``__getattr__`` whenever the normal look-up raises ``AttributeError``,
including when a property *itself* raises one (or a subclass: ``NoSuchNodeError`` is an
``AttributeError``).  A group's ``__getattr__`` then looks for a child called
``_v_attrs``, an attribute set's for an HDF5 attribute called ``_v_attrnames``; when that
look-up needs the failing property again, Python recurses until ``RecursionError``, and at
best the real error is replaced by a misleading one ("no child named ``_v_attrs``").

Every ``__getattr__`` of the node classes starts with :func:`member_failed`: for a name
that is a member of the class, the member is evaluated again and its own exception
propagates (an exception raised in ``__getattr__`` goes straight to the caller).
"""

from __future__ import annotations

from typing import Any


def is_member(obj: object, name: str) -> bool:
    """Whether ``name`` is defined by the class of ``obj`` or a base (a method, a property,
    a class variable), not by the instance."""
    return any(name in vars(klass) for klass in type(obj).__mro__)


def member_failed(obj: object, name: str) -> Any:
    """Evaluate member ``name`` of ``obj`` again, from its class's ``__getattr__``.

    Call it when :func:`is_member` says ``name`` is a member: the normal look-up failed
    inside the member.  Its exception now propagates to the caller (``__getattr__`` is
    not asked again); should it succeed this time, its value is returned.
    """
    return object.__getattribute__(obj, name)


__all__ = ["is_member", "member_failed"]
