"""What a state directory holds, for tests that check a command changed nothing."""

from pathlib import Path

from katib_resume.adapters.fake.persistence import read


def committed(state: Path) -> object:
    """Everything the state directory's database holds (its bytes also count the times the
    database was opened for writing, so they cannot be compared)."""
    cluster = read(state)
    files = sorted(p.name for p in state.iterdir() if p.name != ".lock")
    return cluster.store.to_dict(), cluster.events, files
