"""Errors that tell the user what to do next."""

from __future__ import annotations


class GrainlabError(Exception):
    """Base class for every error grainlab raises on purpose."""


class DatasetNotFound(GrainlabError):
    """A dataset is unknown, or its files are neither in the mirror nor downloadable."""


class MalformedData(GrainlabError):
    """A data file does not have the expected shape; the message names file and line."""


class ModelNotAvailable(GrainlabError):
    """A model id resolves neither to the hub nor to an installed offline copy."""


class ConfigError(GrainlabError):
    """A configuration string or parameter is invalid."""


class NotebookFailed(GrainlabError):
    """A notebook raised while papermill ran it; the message names the cell and the error."""


class DuplicateContrastWarning(UserWarning):
    """Two claims of one family test the same systems under two labels; the family keeps one."""
