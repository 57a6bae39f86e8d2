"""SplitLab's model of distributed training: pure Python + numpy, SI units inside.

Shared nouns (import no concept package): units, checks, hardware, model, parallel,
schedule_names, training.
Concept packages (import shared nouns and each other, never planner, scenarios or quiz):
collectives, pipeline, memory, data_parallel, tensor_parallel, reliability, traces.
The planner composes the concepts; scenarios and quiz compose everything.
"""
