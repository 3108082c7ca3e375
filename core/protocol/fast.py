"""Building already-typed pydantic models on the hot path without re-validation.

``BaseModel.model_construct`` skips validation but still walks every field in Python (about as
slow as validating a small model). The episode loop builds a transcript entry per event and an
agent view per step from values that are typed already, so it uses :func:`construct`, which
fills the instance dictionary directly. The result is indistinguishable from
``model_construct`` with every field given: equal, and serialised identically.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

M = TypeVar("M", bound=BaseModel)

_FIELDS: dict[type[BaseModel], tuple[str, ...]] = {}


def _field_names(cls: type[BaseModel]) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(cls.model_fields)
    return names


def construct(cls: type[M], values: dict[str, Any]) -> M:
    """Return an instance of ``cls`` holding ``values`` (every field, no validation).

    Args:
        cls: A pydantic model without private attributes or extra fields.
        values: A value for every field of ``cls``, already of the declared type (the dict
            becomes the instance's ``__dict__``; do not reuse it).

    Raises:
        ValueError: If ``values`` does not name exactly the fields of ``cls``.
    """
    names = _FIELDS.get(cls) or _field_names(cls)
    if len(values) != len(names) or not values.keys() >= set(names):
        missing = set(names) ^ set(values)
        raise ValueError(f"{cls.__name__}: fields must be given exactly (differs: {missing})")
    obj = _new(cls)
    _set(obj, "__dict__", values)
    _set(obj, "__pydantic_fields_set__", set(values))
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


_new = object.__new__
_set = object.__setattr__


_DEFAULTS: dict[type[BaseModel], dict[str, Any]] = {}


def construct_defaults(cls: type[M], values: dict[str, Any]) -> M:
    """:func:`construct` with absent fields taken from their (immutable) plain defaults.

    Fields are laid out in declaration order, as validation would.

    Raises:
        ValueError: For an unknown field, or a missing one without a plain default.
    """
    defaults = _DEFAULTS.get(cls)
    if defaults is None:
        defaults = _DEFAULTS[cls] = {
            n: f.default
            for n, f in cls.model_fields.items()
            if f.default is not PydanticUndefined and f.default_factory is None
        }
    names = _FIELDS.get(cls) or _field_names(cls)
    full: dict[str, Any] = {}
    for n in names:
        if n in values:
            full[n] = values[n]
        elif n in defaults:
            full[n] = defaults[n]
        else:
            raise ValueError(f"{cls.__name__}: missing field {n!r}")
    extra = values.keys() - full.keys()
    if extra:
        raise ValueError(f"{cls.__name__}: unknown fields {sorted(extra)}")
    return construct(cls, full)
