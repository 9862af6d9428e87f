"""What the planner observes (``core/observed.py``): frozen values, an answer the service could
not give read as no assignments and no end, a valid verdict with nothing to say, and the
early-stopping RBAC objects by their Kubernetes kinds."""

from __future__ import annotations

import dataclasses

import pytest

from katib_resume.core.katib import SUG_RUNNING
from katib_resume.core.model import OwnedObject
from katib_resume.core.observed import VALID, Assignments, Observed, Outcome, Validation
from katib_resume.core.plan.marks import running_mark
from katib_resume.core.plan.needs import NeedAssignments
from tests.unit.test_provision import experiment, observed, suggestion


def test_an_unanswered_request_reads_as_no_assignments_and_no_end() -> None:
    state = observed(experiment(), suggestion(3, 0), [])
    answered = NeedAssignments(suggestion(3, 0), 3).answer(state, None)
    assert (answered.assignments, answered.algorithm_settings, answered.exhausted) == ((), (), "")


def test_a_valid_verdict_says_nothing_more_than_running() -> None:
    assert Validation(Outcome.VALID, "") == VALID
    assert (
        running_mark(observed(experiment(), suggestion(3, 0), [], validation=VALID)) == SUG_RUNNING
    )


def test_the_rbac_objects_are_keyed_by_their_kinds() -> None:
    def owned(name: str) -> OwnedObject:
        return OwnedObject.model_validate({"metadata": {"name": name}})

    sa, role, binding = owned("sa"), owned("role"), owned("binding")
    state = Observed("ns", "e", service_account=sa, role=role, role_binding=binding)
    assert state.rbac() == {"ServiceAccount": sa, "Role": role, "RoleBinding": binding}


def test_what_is_observed_are_values() -> None:
    for value in (VALID, Assignments(), Observed("ns", "e")):
        hash(value)  # a mutable dataclass is unhashable
        field = dataclasses.fields(value)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, field, None)
