"""One ``transitions`` machine per lifecycle, compiled once into a lookup table.

Theory of operation. Each lifecycle (Suggestion, Experiment, Trial) is declared, as a typed table
of ``Transition`` rows with ``Enum`` states and past-tense triggers, and handed to a module-level
``transitions.Machine(model=None, ...)``: that machine is the single source of truth (it validates
the table, draws the Mermaid diagram and is what the tests inspect). A ``Machine`` per object
would cost ~0.8 ms and ~47 KB each, so no object ever gets one: at import the machine's own
``events[...].transitions`` are compiled into a dict from ``(state, trigger)`` to guarded branches,
and ``fire`` walks that dict (well under a microsecond). Guards are names of boolean attributes
of a *facts* object the planner builds from the observed snapshot; ``unless`` guards are negated.

A trigger that the table does not allow from a state is a programming error and raises
``IllegalTransition`` loudly (the property tests prove the planner never does it). A trigger that
is allowed but whose guards all fail leaves the state unchanged, as ``transitions`` does.

Which trigger to fire is declared with the table too: ``detectors`` is one ordered list of
``Detector`` rows naming the *signals* (boolean attributes of another object the planner builds)
that justify each trigger, and ``step`` fires the first one the table allows, the signals justify
and the guards let move. The graph says where a trigger may fire; the detectors say when.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from types import SimpleNamespace
from typing import Generic, TypeVar

from transitions import Machine
from transitions.core import Condition

from katib_resume.core.lifecycle.states import Detector

StateT = TypeVar("StateT", bound=Enum)


class IllegalTransition(Exception):
    """The planner fired a trigger the machine does not define from the current state."""


@dataclass(frozen=True, slots=True)
class Transition(Generic[StateT]):
    """One row of a lifecycle table."""

    trigger: str
    source: StateT | tuple[StateT, ...]
    dest: StateT
    conditions: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()

    @property
    def sources(self) -> tuple[StateT, ...]:
        return self.source if isinstance(self.source, tuple) else (self.source,)

    def as_kwargs(self) -> dict[str, object]:
        return {
            "trigger": self.trigger,
            "source": list(self.sources),
            "dest": self.dest,
            "conditions": list(self.conditions),
            "unless": list(self.unless),
        }


@dataclass(frozen=True, slots=True)
class Branch(Generic[StateT]):
    dest: StateT
    guards: tuple[tuple[str, bool], ...]

    def passes(self, facts: object) -> bool:
        return all(bool(getattr(facts, name)) is target for name, target in self.guards)


@dataclass(frozen=True)
class Lifecycle(Generic[StateT]):
    """A declared lifecycle: its states, table, ``transitions`` machine and compiled table."""

    name: str
    states: type[StateT]
    initial: StateT
    table: Sequence[Transition[StateT]]
    detectors: Sequence[Detector] = ()
    """The triggers a planner may fire, in the order it tries them (``step``)."""
    machine: Machine = field(init=False, repr=False)
    compiled: Mapping[tuple[StateT, str], tuple[Branch[StateT], ...]] = field(init=False)
    tries: Mapping[str, tuple[Detector, ...]] = field(init=False, repr=False)
    """Per state (by name), the detectors of the triggers allowed from it, in order."""

    def __post_init__(self) -> None:
        machine = Machine(
            model=None,
            states=self.states,
            transitions=[row.as_kwargs() for row in self.table],
            initial=self.initial,
            auto_transitions=False,
            send_event=True,
        )
        unknown = {d.trigger for d in self.detectors} - {row.trigger for row in self.table}
        if unknown:
            raise ValueError(f"{self.name}: detectors of triggers not in the table: {unknown}")
        object.__setattr__(self, "machine", machine)
        compiled = _compile(machine, self.states)
        object.__setattr__(self, "compiled", compiled)
        tries = {
            state.name: tuple(d for d in self.detectors if (state, d.trigger) in compiled)
            for state in self.states
        }
        object.__setattr__(self, "tries", tries)

    @property
    def triggers(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(row.trigger for row in self.table))

    def allows(self, state: StateT, trigger: str) -> bool:
        return (state, trigger) in self.compiled

    def fire(self, state: StateT, trigger: str, facts: object) -> StateT:
        """The state after ``trigger`` given ``facts`` (unchanged when every guard fails)."""
        branches = self.compiled.get((state, trigger))
        if branches is None:
            raise IllegalTransition(f"{self.name}: {trigger!r} is not allowed from {state.name}")
        for branch in branches:
            if branch.passes(facts):
                return branch.dest
        return state

    def step(self, state: StateT, signals: object, facts: object) -> tuple[str | None, StateT]:
        """Try the detectors in order: the first trigger that the table allows from ``state``,
        that ``signals`` justify and that moves (its guards read ``facts``) fires."""
        for detector in self.tries[state._name_]:
            if detector.detects(signals):
                after = self.fire(state, detector.trigger, facts)
                if after is not state:
                    return detector.trigger, after
        return None, state

    def diagram(self) -> str:
        """The Mermaid ``stateDiagram-v2`` that ``transitions`` draws from the same table."""
        from transitions.extensions import GraphMachine  # only the diagram command pays for it

        graph = GraphMachine(
            model=None,
            states=self.states,
            transitions=[row.as_kwargs() for row in self.table],
            initial=self.initial,
            auto_transitions=False,
            graph_engine="mermaid",
            show_conditions=True,
            title=f"{self.name} lifecycle",
        )
        holder = SimpleNamespace()  # GraphMachine draws through a model's bound get_graph
        graph.add_model(holder)
        text = str(holder.get_graph().draw(None))
        return text.rstrip() + "\n"


def _compile(
    machine: Machine, states: type[StateT]
) -> dict[tuple[StateT, str], tuple[Branch[StateT], ...]]:
    table: dict[tuple[StateT, str], tuple[Branch[StateT], ...]] = {}
    for trigger, event in machine.events.items():
        for source, rows in event.transitions.items():
            table[(states[source], trigger)] = tuple(
                Branch(states[str(row.dest)], _guards(row.conditions)) for row in rows
            )
    return table


def _guards(conditions: Iterable[Condition]) -> tuple[tuple[str, bool], ...]:
    return tuple((str(c.func), bool(c.target)) for c in conditions)
