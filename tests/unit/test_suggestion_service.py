"""The in-process suggestion service: spaces, rendering, validation, start reports, state file."""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import os
import random
import re
from pathlib import Path
from typing import Any

import pytest
import xxhash
import yaml

from katib_resume.adapters.local.suggestion import (
    FILE_NAME,
    SettingsError,
    SpaceError,
    SuggestionServer,
    parse_space,
    state_store,
    validate,
)
from katib_resume.adapters.local.suggestion import state as store
from katib_resume.adapters.local.suggestion.algorithms import seed_of
from katib_resume.adapters.local.suggestion.assignments import name_for
from katib_resume.adapters.local.suggestion.checksum import CHECKSUMS
from katib_resume.adapters.local.suggestion.state_store import JOURNAL_NAME
from katib_resume.core.model import Experiment
from katib_resume.core.observed import Outcome

ROOT = Path(__file__).resolve().parents[2]
LR = {"name": "lr", "parameterType": "double", "feasibleSpace": {"min": "0.01", "max": "0.05"}}
STEPPED = {
    "name": "rate",
    "parameterType": "double",
    "feasibleSpace": {"min": "0.01", "max": "0.05", "step": "0.01"},
}


def experiment(
    parameters: Any = (LR,), algorithm: str = "random", settings: dict[str, str] | None = None
) -> Experiment:
    pairs = [{"name": k, "value": v} for k, v in (settings or {}).items()]
    spec = {
        "algorithm": {"algorithmName": algorithm, "algorithmSettings": pairs},
        "parameters": list(parameters) if isinstance(parameters, tuple) else parameters,
    }
    return Experiment.model_validate({"metadata": {"name": "exp", "namespace": "ns"}, "spec": spec})


def param(name: str, type_: str, **space: Any) -> dict[str, Any]:
    return {"name": name, "parameterType": type_, "feasibleSpace": space}


def grid(*parameters: dict[str, Any]) -> Experiment:
    return experiment(list(parameters), "grid")


# Spaces and rendering


def test_the_katib_example_is_two_continuous_doubles() -> None:
    raw = yaml.safe_load((ROOT / "examples" / "from-volume-resume.yaml").read_text())
    space = parse_space(raw["spec"]["parameters"])
    assert [p.name for p in space.parameters] == ["lr", "momentum"]
    assert space.grid_size is None
    for name, value in space.sample(random.Random(1)):
        low, high = (0.01, 0.05) if name == "lr" else (0.5, 0.9)
        assert low <= float(value) <= high
        assert repr(float(value)) == value


def test_a_double_grid_lands_on_the_decimal_values() -> None:
    space = parse_space([param("lr", "double", min="0.01", max="0.05", step="0.01")])
    values = [space.grid_point(i)[0][1] for i in range(space.grid_size or 0)]
    assert values == ["0.01", "0.02", "0.03", "0.04", "0.05"]


def test_ints_render_as_integers_and_lists_verbatim() -> None:
    space = parse_space(
        [
            param("n", "int", min="1.0", max="7", step="3"),
            param("d", "discrete", list=["0.10", "1e2"]),
            param("c", "categorical", list=["sgd", "adam"]),
        ]
    )
    points = [space.grid_point(i) for i in range(space.grid_size or 0)]
    assert len(points) == 3 * 2 * 2
    assert {dict(p)["n"] for p in points} == {"1", "4", "7"}
    assert {dict(p)["d"] for p in points} == {"0.10", "1e2"}
    assert points[:3] == [
        (("n", "1"), ("d", "0.10"), ("c", "sgd")),
        (("n", "1"), ("d", "0.10"), ("c", "adam")),
        (("n", "1"), ("d", "1e2"), ("c", "sgd")),
    ]


def test_the_fingerprint_is_the_digest_of_every_field_as_text() -> None:
    """Saved states carry it: it must stay what it always was (``asdict``, each value's text)."""
    space = parse_space(
        [
            param("n", "int", min="1.0", max="7", step="3"),
            param("x", "double", min="0.5", max="1"),
            param("d", "discrete", list=["0.10", "1e2"]),
            param("c", "categorical", list=["sgd", "adam"]),
        ]
    )
    data = [{k: str(v) for k, v in dataclasses.asdict(p).items()} for p in space.parameters]
    expected = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()
    assert space.fingerprint() == expected


def test_plain_yaml_numbers_are_accepted() -> None:
    space = parse_space([param("n", "int", min=0, max=2), param("x", "double", min=0.5, max=1)])
    assert space.parameters[0].count == 3
    assert space.parameters[1].count is None


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        (None, "spec.parameters must be a non-empty list"),
        ([], "spec.parameters must be a non-empty list"),
        (["lr"], "spec.parameters[0] must be a mapping with a non-empty name"),
        ([param("x", "float", min="0", max="1")], "'x': parameterType must be one of"),
        ([param("x", "double", min="a", max="1")], "'x': min 'a' is not a number"),
        ([param("x", "double", max="1")], "'x': min is missing or not a number"),
        ([param("x", "double", min="0", max="inf")], "'x': max 'inf' is not a finite number"),
        ([param("x", "double", min="NaN", max="1")], "'x': min 'NaN' is not a finite number"),
        ([param("x", "double", min="2", max="1")], "'x': max (1) is less than min (2)"),
        ([param("x", "int", min="0.5", max="1")], "'x': min '0.5' is not an integer"),
        ([param("x", "int", min="0", max="9", step="0")], "'x': step must be positive"),
        ([param("x", "double", min="0", max="1", step="-1")], "'x': step must be positive"),
        ([param("x", "double", min="1", max="2", step="1e-20")], "too small to tell values"),
        ([param("x", "discrete", list=[])], "'x': a discrete parameter needs a non-empty list"),
        ([param("x", "discrete", list=["1", "b"])], "'x': list entry 'b' is not a number"),
        ([param("x", "categorical", list=["a", "a"])], "'x': the list has a repeated value"),
        ([param("x", "categorical")], "'x': a categorical parameter needs a non-empty list"),
        ([LR, LR], "parameter names must be unique, repeated: lr"),
        (  # not one of Katib's spellings (its webhook refuses it; a gRPC client may not)
            [param("x", "double", min="1", max="2", distribution="zipf")],
            "'x': distribution 'zipf' is not supported",
        ),
    ],
)
def test_bad_spaces_say_what_is_wrong(parameters: Any, message: str) -> None:
    with pytest.raises(SpaceError, match=re.escape(message)):
        parse_space(parameters)


def test_the_defaulted_uniform_distribution_is_accepted() -> None:
    parse_space([param("x", "double", min="1", max="2", distribution="uniform")])


# Validation (Katib's ValidateAlgorithmSettings)


@pytest.mark.parametrize(
    ("subject", "message"),
    [
        (
            experiment(algorithm="enas"),
            "unknown algorithm 'enas': this service implements bayesianoptimization, cmaes, grid,"
            " hyperband, multivariate-tpe, pbt, random, sobol, tpe",
        ),
        (
            experiment(settings={"n_startup": "3"}),
            "unknown setting n_startup for algorithm random",
        ),
        (
            experiment(settings={"random_state": "-1"}),
            "random_state should be great or equal than zero",  # the hyperopt service's
        ),
        (
            experiment(settings={"random_state": "x"}),
            "failed to validate random_state(x): invalid literal for int() with base 10: 'x'",
        ),
        (
            experiment([STEPPED], "grid", {"random_state": "-1"}),
            "random_state should be greate or equal than zero",  # the Optuna service's
        ),
        (
            experiment([STEPPED], "grid", {"seed": "1"}),
            "unknown setting seed for algorithm grid",
        ),
        (
            grid(STEPPED, LR),
            "failed to validate parameters(rate, lr): Param lr step is nil; For discrete search"
            " space, all parameters must include step",
        ),
        (experiment([]), "spec.parameters must be a non-empty list of parameters"),
        (  # Katib's service would enumerate all 10**40 cells to count them
            grid(*(param(f"p{i}", "int", min="1", max="10") for i in range(40))),
            f"the grid has {10**40} cells, more than the 2**128 this service can order",
        ),
        (experiment([LR, LR], "sobol"), "Detect duplicated parameter name: lr"),  # Goptuna's
        (  # Goptuna checks the dimensions first, then the names, then the settings
            experiment([LR, LR], "cmaes", {"random_state": "x"}),
            "Detect duplicated parameter name: lr",
        ),
        (
            experiment([LR, param("c", "categorical", list=["a"])], "cmaes", {"sigma": "x"}),
            "CMA-ES only supports two or more dimensional continuous search space.",
        ),
    ],
)
def test_invalid_experiments_are_invalid_with_a_clear_message(
    subject: Experiment, message: str
) -> None:
    verdict = validate(subject)
    assert verdict.outcome is Outcome.INVALID
    assert verdict.message == message
    assert SuggestionServer(subject, 0, None).validate() == verdict


def test_valid_experiments_are_valid() -> None:
    stepped = param("lr", "double", min="0.01", max="0.05", step="0.01")
    seeded = experiment([stepped], "grid", {"random_state": "7"})  # Katib's grid takes a seed
    seeded_random = experiment(settings={"random_state": "7"})
    for subject in (experiment(), seeded_random, grid(stepped), seeded):
        assert validate(subject).outcome is Outcome.VALID


def test_an_algorithm_without_a_seed_setting_uses_the_search_seed() -> None:
    """``seed_of`` reads ``random_state`` only where Katib's service has it (the gRPC service
    asks before it knows the algorithm is one of ours)."""
    assert seed_of(experiment(algorithm="enas", settings={"random_state": "3"}), 7) == 7
    assert seed_of(experiment(settings={"random_state": "3"}), 7) == 3


def test_random_state_overrides_the_seed() -> None:
    subject = experiment(settings={"random_state": "42"})
    runs = []
    for seed in (1, 2):
        server = SuggestionServer(subject, seed, None)
        server.start([])
        runs.append(server.get_suggestions([], 4))
    assert runs[0] == runs[1]


def test_an_invalid_experiment_starts_but_serves_nothing(tmp_path: Path) -> None:
    server = SuggestionServer(grid(LR), 0, tmp_path)
    report = server.start([])
    assert report.source == "new"
    assert report.reason.startswith("suggestion state not loaded: failed to validate parameters")
    with pytest.raises(SettingsError):
        server.get_suggestions([], 1)
    assert list(tmp_path.iterdir()) == []


# Serving


def started(data_dir: Path | None, subject: Experiment | None = None) -> SuggestionServer:
    server = SuggestionServer(subject or experiment(), 5, data_dir)
    server.start([])
    return server


def test_a_server_must_be_started() -> None:
    server = SuggestionServer(experiment(), 5, None)
    with pytest.raises(RuntimeError, match="not started"):
        server.get_suggestions([], 1)
    server.start([])
    server.stop()
    with pytest.raises(RuntimeError, match="not started"):
        server.get_suggestions([], 1)


def test_assignments_have_katib_names_and_values() -> None:
    batch = started(None).get_suggestions([], 3)
    assert len(batch) == 3
    for item in batch:
        assert re.fullmatch(r"exp-[a-z0-9]{8}", item["name"])
        assert [v["name"] for v in item["parameterAssignments"]] == ["lr"]
    assert len({item["name"] for item in batch}) == 3


def test_a_lost_response_is_served_again() -> None:
    server = started(None)
    first = server.get_suggestions([], 2)
    assert server.get_suggestions([], 3)[:2] == first
    assert server.get_suggestions(first, 3) == list(server.issued[2:3])
    assert server.get_suggestions(first, 1) == []


def test_fields_the_controller_adds_do_not_matter() -> None:
    server = started(None)
    have = [{**item, "labels": {"a": "b"}} for item in server.get_suggestions([], 2)]
    third = server.get_suggestions(have, 3)
    assert third == list(server.issued[2:])


def test_a_different_history_is_adopted_not_repeated() -> None:
    server = started(None)
    server.get_suggestions([], 2)
    foreign = [{"name": "exp-zzzzzzzz", "parameterAssignments": [{"name": "lr", "value": "0.02"}]}]
    batch = server.get_suggestions(foreign, 3)
    assert len(batch) == 2
    assert server.issued[0] == foreign[0]
    assert len({item["name"] for item in server.issued}) == 3


def test_grid_stops_when_exhausted(tmp_path: Path) -> None:
    server = started(tmp_path, grid(param("n", "int", min="1", max="3")))
    values = [item["parameterAssignments"][0]["value"] for item in server.get_suggestions([], 5)]
    assert sorted(values) == ["1", "2", "3"]
    assert server.get_suggestions(list(server.issued), 6) == []


def test_a_grid_budget_smaller_than_the_grid_spreads_over_it() -> None:
    """Katib's grid draws each cell at random from those not drawn yet: a third of a 30 x 30
    grid reaches every value of both parameters (the product's own order would give 10 values
    of the first one), and the order is the seed's."""
    subject = grid(param("a", "int", min="1", max="30"), param("b", "int", min="1", max="30"))
    orders = []
    for seed in (0, 0, 1):
        server = SuggestionServer(subject, seed, None)
        server.start([])
        batch = server.get_suggestions([], 300)
        orders.append([tuple(v["value"] for v in item["parameterAssignments"]) for item in batch])
    assert orders[0] == orders[1] != orders[2]
    assert len(set(orders[0])) == 300
    assert {a for a, _ in orders[0]} == {b for _, b in orders[0]} == {str(i) for i in range(1, 31)}


def test_grid_skips_points_a_foreign_history_holds() -> None:
    subject = grid(param("n", "int", min="1", max="4"))
    server = SuggestionServer(subject, 0, None)
    history = [{"name": "exp-a", "parameterAssignments": [{"name": "n", "value": "2"}]}]
    assert server.start(history).source == "rebuilt"
    values = [
        item["parameterAssignments"][0]["value"] for item in server.get_suggestions(history, 9)
    ]
    assert sorted(values) == ["1", "3", "4"]


def test_a_name_already_taken_is_derived_again() -> None:
    natural = name_for("exp", 1, 0, set())
    other = name_for("exp", 1, 0, {natural})
    assert other != natural
    assert other == name_for("exp", 1, 0, {natural})
    assert re.fullmatch(r"exp-[a-z0-9]{8}", other)


# Start reports and the state file


def test_start_reports_say_where_the_state_came_from(tmp_path: Path) -> None:
    server = SuggestionServer(experiment(), 5, tmp_path)
    assert server.start([]).reason == f"suggestion state missing from {tmp_path}: a new search"
    history = server.get_suggestions([], 3)
    again = SuggestionServer(experiment(), 5, tmp_path).start(history)
    assert again.source == "restored"
    assert again.reason == f"suggestion state restored from {tmp_path / FILE_NAME} (3 assignments)"
    (tmp_path / FILE_NAME).unlink()
    lost = SuggestionServer(experiment(), 5, tmp_path).start(history)
    assert lost.source == "rebuilt"
    assert (
        lost.reason
        == f"suggestion state missing from {tmp_path}: rebuilt by replaying 3 assignments"
    )


def test_a_new_search_is_saved_by_its_first_call_not_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saves: list[int] = []
    real = state_store.StateStore.save

    def counting(self: state_store.StateStore, state: Any) -> None:
        saves.append(len(state.issued))
        real(self, state)

    monkeypatch.setattr(state_store.StateStore, "save", counting)
    server = started(tmp_path)
    assert not (tmp_path / FILE_NAME).exists()  # a rebuild of no history gives the same state
    assert server.get_suggestions([], 0) == []
    assert state_store.load(tmp_path / FILE_NAME).issued == ()  # saved although nothing was issued
    history = server.get_suggestions([], 2)
    assert server.get_suggestions(history, 2) == []  # unchanged since the last save: no save
    assert saves == [0, 2]
    report = SuggestionServer(experiment(), 5, tmp_path).start(history)
    assert report.source == "restored"


def corrupt_checksum(path: Path) -> None:
    document = json.loads(path.read_text())
    checksum = CHECKSUMS[document["version"]]  # the digest of the file's version
    document[checksum.key] = "0" * checksum.size
    path.write_text(json.dumps(document))


def edit_version(path: Path) -> None:
    document = json.loads(path.read_text())
    document["version"] = 99
    path.write_text(json.dumps(document))


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda p: p.write_bytes(b"\x00\xff{"), "suggestion state corrupt (not valid JSON)"),
        (
            lambda p: p.write_bytes(p.read_bytes()[:100]),
            "suggestion state corrupt (not valid JSON)",
        ),
        (corrupt_checksum, "suggestion state corrupt (checksum mismatch)"),
        (edit_version, "suggestion state corrupt (unsupported format version 99)"),
        (lambda p: p.write_text("[]"), "suggestion state corrupt (not a suggestion state file)"),
    ],
)
def test_a_corrupt_state_is_rebuilt_and_kept_aside(
    tmp_path: Path, damage: Any, reason: str
) -> None:
    history = started(tmp_path).get_suggestions([], 3)
    damage(tmp_path / FILE_NAME)
    server = SuggestionServer(experiment(), 5, tmp_path)
    report = server.start(history)
    assert report.source == "rebuilt"
    assert report.reason == (
        f"{reason}: rebuilt by replaying 3 assignments;"
        f" the old files are kept as {FILE_NAME}.discarded and {JOURNAL_NAME}.discarded"
    )
    assert server.issued == tuple(history)
    assert state_store.load(tmp_path / FILE_NAME).issued == tuple(history)


def test_a_state_for_another_search_is_not_resumed(tmp_path: Path) -> None:
    history = started(tmp_path).get_suggestions([], 2)
    other = experiment([param("lr", "double", min="0.01", max="0.06")])
    report = SuggestionServer(other, 5, tmp_path).start(history)
    assert report.source == "rebuilt"
    assert "is for another search (search space changed)" in report.reason
    assert "the replay differs from the history from assignment 1 on" in report.reason


def test_a_state_behind_the_history_is_not_resumed(tmp_path: Path) -> None:
    server = started(tmp_path)
    history = server.get_suggestions([], 2)
    saved = {path: path.read_bytes() for path in tmp_path.iterdir()}  # the volume after 2
    history += server.get_suggestions(history, 4)
    for path in tmp_path.iterdir():
        path.unlink()
    for path, data in saved.items():
        path.write_bytes(data)
    report = SuggestionServer(experiment(), 5, tmp_path).start(history)
    assert report.source == "rebuilt"
    assert "(2 assignments) disagrees with the history (4 assignments)" in report.reason


def test_the_file_carries_a_version_and_a_checksum_of_its_payload(tmp_path: Path) -> None:
    started(tmp_path).get_suggestions([], 2)
    document = json.loads((tmp_path / FILE_NAME).read_text())
    assert document["version"] == 7
    digest = xxhash.xxh3_128_hexdigest(store.canonical(document["payload"]))
    assert document["xxh3_128"] == digest
    assert len(document["payload"]["issued"]) == 2


def test_without_a_volume_nothing_is_written(tmp_path: Path) -> None:
    server = started(None)
    server.get_suggestions([], 3)
    assert server.path is None
    assert list(tmp_path.iterdir()) == []


def test_a_failed_save_leaves_the_previous_file_and_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = started(tmp_path)
    first = server.get_suggestions([], 2)
    names = sorted(p.name for p in tmp_path.iterdir())
    before = [(tmp_path / name).read_bytes() for name in names]

    def fail(*_: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", fail)  # the append's (a record, one fsync)
    with pytest.raises(OSError, match="disk full"):
        server.get_suggestions(first, 4)
    monkeypatch.undo()
    assert names == sorted([FILE_NAME, JOURNAL_NAME])  # the snapshot, a journal of no records
    assert [(tmp_path / name).read_bytes() for name in names] == before  # the record cut
    assert state_store.load(tmp_path / FILE_NAME).issued == tuple(first)
    assert sorted(p.name for p in tmp_path.iterdir()) == names
    assert server.issued == tuple(first)
    assert server.get_suggestions(first, 4) == started(None).get_suggestions([], 4)[2:]


def test_a_save_syncs_the_file_and_its_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real = os.fsync

    def fsync(descriptor: int) -> None:
        synced.append(descriptor)
        real(descriptor)

    monkeypatch.setattr(os, "fsync", fsync)
    started(tmp_path).get_suggestions([], 1)
    assert len(synced) >= 2


def test_the_package_builds_on_core_only() -> None:
    forbidden = ("katib_resume.adapters.fake", "katib_resume.adapters.k8s", "katib_resume.app")
    for path in (ROOT / "adapters" / "local" / "suggestion").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            assert not any(n == f or n.startswith(f + ".") for n in names for f in forbidden)


def test_a_random_search_saves_its_position_not_a_generator(tmp_path: Path) -> None:
    started(tmp_path).get_suggestions([], 3)
    document = json.loads((tmp_path / FILE_NAME).read_text())
    assert document["payload"]["cursor"] == 3
    assert len((tmp_path / FILE_NAME).read_bytes()) < 2_000


def test_a_random_point_does_not_depend_on_the_batches_it_was_drawn_in() -> None:
    one = started(None)
    batched = one.get_suggestions([], 2)
    batched += one.get_suggestions(batched, 5)
    assert batched == started(None).get_suggestions([], 5)


def test_a_state_file_of_the_old_format_is_rebuilt_not_trusted(tmp_path: Path) -> None:
    server = started(tmp_path)
    history = server.get_suggestions([], 2)
    path = tmp_path / FILE_NAME
    document = json.loads(path.read_text())
    document["version"] = 1
    path.write_text(json.dumps(document))
    again = SuggestionServer(experiment(), 5, tmp_path)
    report = again.start(history)
    assert report.source == "rebuilt"
    assert "unsupported format version 1" in report.reason
    assert again.get_suggestions(history, 4) == server.get_suggestions(history, 4)
