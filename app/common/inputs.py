"""Reading the user's files: every problem becomes one line that names the file, never a traceback.

YAML is parsed here (the core never sees text or files); the core's pydantic models then check
the shape. A ``pydantic.ValidationError`` is reduced to its first error as ``field.path: problem``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from katib_resume.app.common.errors import InputError
from katib_resume.core.config import ConfigError, KatibConfig, parse_katib_config
from katib_resume.core.katib import API_VERSION
from katib_resume.core.local_volumes import with_local_volumes
from katib_resume.core.model import Experiment

SHIPPED_CONFIG = "katib-config.yaml"
SHIPPED_ORIGIN = "shipped katib-config"
EMBEDDED_HEADER = (
    "# Katib's shipped katib-config in the local volume mode (docs/local-volumes.md),\n"
    "# written by the first command on this state directory.\n"
)


def read_text(path: str) -> str:
    """The UTF-8 text of ``path``."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: cannot read: {_os_reason(error)}") from None


def read_yaml(path: str) -> Any:
    """The single YAML document in ``path`` (a leading ``---`` is fine)."""
    return parse_yaml(read_text(path), path)


def read_stored_yaml(path: str) -> Any:
    """``read_yaml`` of a file this program keeps (the state directory's katib-config, read
    by every command): parsed by libyaml's loader where PyYAML has it, ten times faster than
    the pure one. Anything it refuses, or anything but one document, is read again by
    ``read_yaml``, so a problem is reported as it always was."""
    text = read_text(path)
    try:
        documents = [doc for doc in yaml.load_all(text, Loader=_FAST_LOADER) if doc is not None]
    except yaml.YAMLError:
        documents = []
    return documents[0] if len(documents) == 1 else parse_yaml(text, path)


_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml(text: str, origin: str) -> Any:
    try:
        documents = [doc for doc in yaml.safe_load_all(text) if doc is not None]
    except yaml.YAMLError as error:
        raise InputError(f"{origin}: invalid YAML: {_yaml_reason(error)}") from None
    if len(documents) != 1:
        raise InputError(f"{origin}: expected one YAML document, found {len(documents)}")
    return documents[0]


def load_experiment(path: str) -> Experiment:
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping (an Experiment), found {_kind_of(data)}")
    kind, version = data.get("kind"), data.get("apiVersion")
    if (kind, version) != ("Experiment", API_VERSION):
        raise InputError(
            f"{path}: expected kind Experiment (apiVersion {API_VERSION}), "
            f"found kind {kind!r} (apiVersion {version!r})"
        )
    try:
        return Experiment.model_validate(data)
    except ValidationError as error:
        raise InputError(f"{path}: {describe(error)}") from None


def load_config(path: str | None) -> KatibConfig:
    """The katib-config at ``path``, or Katib's shipped one when ``path`` is ``None``."""
    if path is None:
        return config_from_text(shipped_config_text(), SHIPPED_ORIGIN)
    return config_from_text(read_text(path), path)


def config_from_text(text: str, origin: str) -> KatibConfig:
    """The katib-config in ``text``; errors name ``origin`` (a path, or ``SHIPPED_ORIGIN``)."""
    return _parse_config(parse_yaml(text, origin), origin)


def embedded_config() -> KatibConfig:
    """Katib's shipped katib-config in the local volume mode (``docs/local-volumes.md``): what
    a new embedded state directory starts with when it is given no ``--config``."""
    return _parse_config(with_local_volumes(_shipped_data()), SHIPPED_ORIGIN)


def embedded_config_text() -> str:
    """``embedded_config`` as the YAML a state directory keeps."""
    data = with_local_volumes(_shipped_data())
    return EMBEDDED_HEADER + yaml.safe_dump(data, sort_keys=False)


def shipped_config_text() -> str:
    """Katib's shipped katib-config, as written (comments and order kept)."""
    return resources.files("katib_resume.app").joinpath("data", SHIPPED_CONFIG).read_text("utf-8")


def _shipped_data() -> Any:
    return parse_yaml(shipped_config_text(), SHIPPED_ORIGIN)


def _parse_config(data: Any, origin: str) -> KatibConfig:
    try:
        return parse_katib_config(data)
    except ConfigError as error:
        raise InputError(f"{origin}: {error}") from None


def describe(error: ValidationError, limit: int = 3) -> str:
    """The problems of a pydantic error as ``field.path: message``, joined on one line."""
    problems = [
        f"{'.'.join(str(part) for part in found['loc']) or 'document'}: {found['msg']}"
        for found in error.errors()[:limit]
    ]
    more = error.error_count() - limit
    return "; ".join(problems) + (f" (and {more} more)" if more > 0 else "")


def _kind_of(data: object) -> str:
    return "nothing" if data is None else type(data).__name__


def _os_reason(error: Exception) -> str:
    return error.strerror if isinstance(error, OSError) and error.strerror else str(error)


def _yaml_reason(error: yaml.YAMLError) -> str:
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    return f"{problem} (line {mark.line + 1}, column {mark.column + 1})" if mark else problem
