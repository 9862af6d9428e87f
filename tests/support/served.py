"""Our suggestion service on a local gRPC port, with the controller's client to it: a
``suggestion-server`` pod on a volume (``data_dir``), that a test stops and starts again."""

from __future__ import annotations

from pathlib import Path

from katib_resume.adapters.fake.cluster import FakeCluster
from katib_resume.adapters.grpc import Endpoints, GrpcSuggestionService
from katib_resume.adapters.grpc.server import ApiServer
from katib_resume.app.suggestion.service import SuggestionApi
from katib_resume.core.katib import GRPC_HEALTH_SERVICE
from katib_resume.core.manifest import Manifest


class Served:
    def __init__(self, data_dir: Path, experiment: Manifest) -> None:
        self.data_dir = data_dir
        self.cluster = FakeCluster()
        self.cluster.create(experiment)
        self.start()

    def start(self) -> None:
        """A new pod on the same volume."""
        api = SuggestionApi(self.data_dir, 0)
        self.server = ApiServer(api.handlers(), ["127.0.0.1:0"], healthy=[GRPC_HEALTH_SERVICE])
        self.endpoint = f"127.0.0.1:{self.server.ports[0]}"
        self.client = GrpcSuggestionService(self.cluster, Endpoints(self.endpoint, self.endpoint))

    def stop(self) -> None:
        self.client.close()
        self.server.stop()
