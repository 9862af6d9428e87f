"""Adapters implementing the core's ports: ``fake`` (in memory) and ``k8s`` (a real cluster)."""
