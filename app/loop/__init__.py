"""The reconcile loop, the same in both runtimes: a watch-fed cache, a de-duplicating work queue
of Experiment keys, and one reconcile (gather, decide, act) around the core's planner.
"""
