"""Recipes: how a dataset was built, recorded so that it can be built again.

A dataset loaded by name (:func:`grainlab.data.load_dataset`) carries ``info["recipe"] =
{"dataset": name, "split": split}``. A function decorated with :func:`derivation` records, on the
dataset it returns, ``{"derive": "module:function", "args": {...}}``: every argument with the
defaults applied, a dataset argument as its own recipe, a path relative to the mirror or the
project. The engine writes the recipe into an experiment's manifest, and :func:`rebuild` follows
it back to a dataset (``grainlab verify``); the fingerprint decides whether it is the data that
ran. A derivation with an input that has no recipe records none: its output is not rebuildable.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from grainlab import settings
from grainlab.data.types import Dataset
from grainlab.errors import ConfigError

RECIPE = "recipe"
F = TypeVar("F", bound=Callable[..., Any])


class NotRebuildable(Exception):
    """An argument a recipe cannot hold (an object that is neither data nor a dataset)."""


def recipe_of(value: Any) -> dict[str, Any] | None:
    """The recipe a dataset (or an object holding one as ``.dataset``) records, if any."""
    dataset = value if isinstance(value, Dataset) else getattr(value, "dataset", None)
    recipe = dataset.info.get(RECIPE) if isinstance(dataset, Dataset) else None
    return recipe if isinstance(recipe, dict) else None


def portable_path(path: str | Path) -> str:
    """``mirror:<rest>`` under the dataset mirror, ``project:<rest>`` under the project, else as given."""
    text = str(path)
    for prefix, root in (("mirror", settings.mirror_dir()), ("project", settings.project_root())):
        if root is None:
            continue
        base = str(Path(root).resolve())
        absolute = str(Path(text).expanduser().resolve())
        if absolute == base or absolute.startswith(base + "/"):
            return f"{prefix}:{absolute[len(base):].lstrip('/')}"
    return text


def local_path(text: str) -> str:
    """The path :func:`portable_path` names, on this machine."""
    prefix, _, rest = text.partition(":")
    if prefix == "mirror":
        root = settings.mirror_dir()
        if root is None:
            raise ConfigError(f"{text} lies in the dataset mirror: set $GRAINLAB_MIRROR (or pass --mirror)")
        return str(Path(root) / rest)
    if prefix == "project":
        return str(settings.project_root() / rest)
    return text


def _encode(value: Any, is_path: bool) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str | Path):
        return {"$path": portable_path(value)} if is_path else str(value)
    if isinstance(value, Dataset) or isinstance(getattr(value, "dataset", None), Dataset):
        recipe = recipe_of(value)
        if recipe is None:
            raise NotRebuildable(f"a {type(value).__name__} with no recipe")
        return {"$recipe": recipe}
    if isinstance(value, list | tuple):
        return [_encode(v, is_path) for v in value]
    if isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
        return {"$map": {k: _encode(v, is_path) for k, v in value.items()}}
    raise NotRebuildable(f"an argument of type {type(value).__name__}")


def derivation(func: F | None = None, *, paths: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> Any:
    """Record a recipe on what ``func`` returns (a dataset, or an object with ``.dataset``).

    ``paths``: arguments that name files, kept relative to the mirror or the project;
    ``ignore``: arguments that do not change the data (a cache, a progress flag)."""

    def wrap(function: F) -> F:
        signature = inspect.signature(function)
        name = f"{function.__module__}:{function.__qualname__}"

        @functools.wraps(function)
        def derived(*args: Any, **kwargs: Any) -> Any:
            result = function(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            dataset = result if isinstance(result, Dataset) else getattr(result, "dataset", None)
            if isinstance(dataset, Dataset):
                try:
                    encoded = {k: _encode(v, k in paths) for k, v in bound.arguments.items() if k not in ignore}
                    dataset.info[RECIPE] = {"derive": name, "args": encoded}
                except NotRebuildable:
                    dataset.info.pop(RECIPE, None)
            return result

        return derived  # type: ignore[return-value]

    return wrap(func) if func is not None else wrap


def _decode(value: Any, load: Callable[..., Dataset]) -> Any:
    if isinstance(value, list):
        return [_decode(v, load) for v in value]
    if isinstance(value, dict):
        if "$path" in value:
            return local_path(value["$path"])
        if "$recipe" in value:
            return _build(value["$recipe"], load)
        if "$map" in value:
            return {k: _decode(v, load) for k, v in value["$map"].items()}
    return value


def _build(recipe: Mapping[str, Any], load: Callable[..., Dataset]) -> Any:
    if "dataset" in recipe:
        name = recipe["dataset"]
        name = local_path(name["$path"]) if isinstance(name, dict) else name
        split = recipe.get("split", "test")
        return load(name) if split == "test" else load(name, split=split)
    module_name, _, function_name = str(recipe.get("derive", "")).partition(":")
    if not module_name.startswith("grainlab."):
        raise ConfigError(f"a recipe names {recipe.get('derive')!r}, not a grainlab function: it cannot be rebuilt")
    try:
        function = getattr(importlib.import_module(module_name), function_name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"a recipe names {recipe['derive']}, which this code no longer has ({exc})") from exc
    args = {k: _decode(v, load) for k, v in recipe.get("args", {}).items()}
    return function(**args)


def rebuild(recipe: Mapping[str, Any], load: Callable[..., Dataset]) -> Dataset:
    """The dataset ``recipe`` describes, its named datasets read with ``load(name[, split=…])``."""
    built = _build(recipe, load)
    dataset = built if isinstance(built, Dataset) else getattr(built, "dataset", None)
    if not isinstance(dataset, Dataset):
        raise ConfigError(f"the recipe {recipe.get('derive')} built a {type(built).__name__}, not a dataset")
    return dataset


def with_recipe(dataset: Dataset, recipe: Mapping[str, Any] | None) -> Dataset:
    """``dataset`` recording ``recipe`` (none: no recipe), for a loader that is not a derivation."""
    if recipe is None:
        dataset.info.pop(RECIPE, None)
    else:
        dataset.info[RECIPE] = dict(recipe)
    return dataset
