"""``katib-resume plan``: the objects the controller would create for an Experiment.

Runs the controller's own code on a snapshot where nothing exists yet: admission with
defaulting (``core.admission.admit``, with no PersistentVolume), the Suggestion the Experiment's
planner creates, and the children the Suggestion's planner ensures, in the order it creates
them. Nothing is invented for the preview except that no UID exists yet, so owner references
carry none.
"""

from __future__ import annotations

from katib_resume.core.admission import NO_VOLUMES, admit
from katib_resume.core.config import ConfigError, KatibConfig
from katib_resume.core.denied import Denied
from katib_resume.core.desired import desired_suggestion
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Experiment, Suggestion
from katib_resume.core.observed import Observed
from katib_resume.core.plan.children import ensure
from katib_resume.core.policy import traits
from katib_resume.core.trials import count_trials, trials_to_create
from katib_resume.core.volumes import volume_plan


def created_objects(experiment: Experiment, config: KatibConfig) -> list[Manifest]:
    """The Suggestion and its children, as the controller creates them on the first run."""
    experiment = admit(experiment, catalog=config, existing_pvs=NO_VOLUMES)
    requests = trials_to_create(experiment.spec, count_trials(()))
    suggestion_manifest = desired_suggestion(experiment, requests)
    suggestion = Suggestion.model_validate(suggestion_manifest)
    service_config = config.suggestion(suggestion.algorithm)
    has_volume = traits(suggestion.spec.policy).has_volume
    volume = volume_plan(suggestion, service_config) if has_volume else None
    observed = Observed(experiment.namespace, experiment.metadata.name, experiment, suggestion)
    ensured = ensure(observed, suggestion, config, volume)
    children = [action.manifest for action in ensured.creates]
    return [suggestion_manifest, *children]


__all__ = ["ConfigError", "Denied", "created_objects"]
