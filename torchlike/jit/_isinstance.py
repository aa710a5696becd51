"""torch.jit.isinstance: isinstance that also checks contained types (List[int], Dict[str, Tensor],
Tuple[...], Optional/Union), with eager torch's rules and messages."""

from __future__ import annotations

import collections.abc
import types
import typing
import warnings
from typing import Any, Union, get_args, get_origin

_BARE = {dict: "dict", list: "list", tuple: "tuple", typing.Dict: "Dict", typing.List: "List",
         typing.Optional: "Optional", typing.Tuple: "Tuple"}  # fmt: skip


def _check_args_exist(target_type: Any) -> None:
    name = _BARE.get(target_type)
    if name is None:
        return
    if name.endswith("ict"):
        raise RuntimeError(
            f"Attempted to use {name} without contained types. Please add contained type, e.g. {name}[int, int]"
        )
    raise RuntimeError(
        f"Attempted to use {name} without a contained type. Please add a contained type, e.g. {name}[int]"
    )


def _warn_if_empty(obj: Any) -> None:
    if obj == [] or obj == {} or obj == ():
        warnings.warn(
            "The inner type of a container is lost when calling torch.jit.isinstance in eager mode. For example, "
            "List[int] would become list and therefore falsely return True for List[float] or List[str].",
            stacklevel=3,
        )


def _matches(obj: Any, t: Any) -> bool:
    return _container(obj, t) if get_origin(t) else builtin_isinstance(obj, t)


builtin_isinstance = isinstance


def _container(obj: Any, target_type: Any) -> bool:
    origin = get_origin(target_type)
    _check_args_exist(target_type)
    args = get_args(target_type)
    if origin is list:
        _warn_if_empty(obj)
        return builtin_isinstance(obj, list) and all(_matches(el, args[0]) for el in obj)
    if origin is dict:
        _warn_if_empty(obj)
        return builtin_isinstance(obj, dict) and all(
            builtin_isinstance(k, args[0]) and _matches(v, args[1]) for k, v in obj.items()
        )
    if origin is tuple:
        _warn_if_empty(obj)
        if not builtin_isinstance(obj, tuple) or len(obj) != len(args):
            return False
        return all(_matches(el, t) for el, t in zip(obj, args))
    if origin is Union or (builtin_isinstance(origin, type) and issubclass(origin, types.UnionType)):
        if obj is None:
            return True
        for t in args:
            if get_origin(t):
                return _container(obj, t)  # torch: the first container alternative decides
            if builtin_isinstance(obj, t):
                return True
    return False


def jit_isinstance(obj: Any, target_type: Any) -> bool:
    """torch.jit.isinstance."""
    if builtin_isinstance(target_type, collections.abc.Container):
        if not builtin_isinstance(target_type, tuple):
            raise RuntimeError("The second argument to `torch.jit.isinstance` must be a type or a tuple of types")
        return any(jit_isinstance(obj, t) for t in target_type)
    if get_origin(target_type):
        return _container(obj, target_type)
    _check_args_exist(target_type)
    return builtin_isinstance(obj, target_type)
