"""The ``SuggestionService`` port over Katib's gRPC API (``api.v1.beta1``).

The only package that imports ``grpc`` and ``google.protobuf``: ``api`` declares Katib's
messages in Python, ``codec`` converts Katib's objects to them, ``endpoints`` says where a
Suggestion's service answers, ``channels`` keeps one connection per service, and ``service``
is the port itself.
"""

from katib_resume.adapters.grpc.endpoints import Endpoints, check_template
from katib_resume.adapters.grpc.service import GrpcSuggestionService

__all__ = ["Endpoints", "GrpcSuggestionService", "check_template"]
