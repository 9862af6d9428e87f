"""``katib-resume suggestion-server``: our suggestion service as Katib's gRPC services."""
