"""Admission as one step: what ``kubectl apply`` or ``kubectl edit`` of an Experiment goes through.

Every way in (the command line's ``run`` and ``edit``, the ``plan`` preview, the validating
webhook) calls ``admit``: Katib's defaults (``core.defaults.default_experiment``, the mutating
webhook), then Katib's validation (``core.validation.validate``: names, counts, the restart rules
on UPDATE, katib-config's catalog, the policy, and on CREATE the stale-PV rule), in the order a
cluster runs the two webhooks. A caller only says where the world's
answers come from: the algorithm catalog, the PersistentVolumes that exist (``existing_pvs``,
read only when the rules ask: ``NO_VOLUMES`` where nothing exists yet, as in a preview) and, in a
cluster, the namespace's labels. Defaulting is idempotent, so the validating webhook, which
receives the object from the mutating one, defaults it again: a no-op then, and the same answer
when a cluster lacks the mutating webhook. The command line plays both webhooks, so ``run``
denies what a cluster denies (``maxTrialCount: 2`` without ``parallelTrialCount`` is defaulted
to 3 in parallel and refused).

``restarts`` is the other question every edit asks: whether the controller will restart the
Experiment after the UPDATE. It is answered by the Experiment machine's own guard, so the
command line can never promise a restart the controller would not make.
"""

from __future__ import annotations

from collections.abc import Container, Mapping

from katib_resume.core.defaults import default_experiment
from katib_resume.core.denied import Denied
from katib_resume.core.lifecycle.experiment import EXPERIMENT, ExperimentFacts, derive
from katib_resume.core.model import Experiment
from katib_resume.core.trials import has_budget
from katib_resume.core.validation import AlgorithmCatalog, is_restartable, validate

NO_VOLUMES: Container[str] = frozenset()
"""No PersistentVolume exists (a preview of a first run)."""
RESTART = "restart_requested"


def admit(
    new: Experiment,
    old: Experiment | None = None,
    *,
    catalog: AlgorithmCatalog | None,
    existing_pvs: Container[str],
    namespace_labels: Mapping[str, str] | None = None,
) -> Experiment:
    """``new`` as the cluster stores it (defaulted), or ``Denied`` with Katib's message.

    ``old`` is the stored object of an UPDATE (None: a CREATE). Lookups in ``existing_pvs``,
    ``catalog`` and ``namespace_labels`` may raise the caller's own errors; they pass through.
    """
    defaulted = default_experiment(new)
    decision = validate(
        defaulted,
        old,
        catalog=catalog,
        existing_pvs=existing_pvs,
        namespace_labels=namespace_labels,
    )
    if not decision.allowed:
        raise Denied(decision)
    return defaulted


def restarts(old: Experiment, new: Experiment) -> bool:
    """Whether the controller restarts ``old`` once its spec is ``new``'s: the Experiment is
    restartable (Succeeded by max trials, restartable policy) and the new budget is above the
    Trials already made, exactly the guards of the machine's ``restart_requested``."""
    state = derive(old.status.conditions)
    if not EXPERIMENT.allows(state, RESTART):
        return False
    facts = ExperimentFacts(
        is_restartable=is_restartable(old),
        has_budget=has_budget(new.spec, old.status.trials),
    )
    return EXPERIMENT.fire(state, RESTART, facts) is not state
