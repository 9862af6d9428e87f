"""The Kubernetes adapter: the only package that will import ``kubernetes`` (issue 4)."""
