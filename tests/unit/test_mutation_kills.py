"""Tests that pin what mutation testing found unpinned (tools/mutate.py, docs/testing.md)."""
