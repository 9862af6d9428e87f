"""The suggestion service (Katib's search algorithms) that resumes from its volume.

``SuggestionServer`` is what an embedding runtime deploys in place of Katib's suggestion
Deployment: ``validate`` answers ``ValidateAlgorithmSettings``, ``get_suggestions`` answers
``GetSuggestions``, and with a ``data_dir`` (the ``FromVolume`` PVC) its state survives a restart.
"""

from katib_resume.adapters.local.suggestion.algorithms import validate
from katib_resume.adapters.local.suggestion.server import StartReport, SuggestionServer
from katib_resume.adapters.local.suggestion.settings import SettingsError
from katib_resume.adapters.local.suggestion.space import SearchSpace, SpaceError, parse_space
from katib_resume.adapters.local.suggestion.state import FILE_NAME

__all__ = [
    "FILE_NAME",
    "SearchSpace",
    "SettingsError",
    "SpaceError",
    "StartReport",
    "SuggestionServer",
    "parse_space",
    "validate",
]
