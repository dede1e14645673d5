"""Drivers that call kvtier's adapters exactly as each inference engine's loader and controller do.

None of SGLang, vLLM or LMCache installs on the project's build machines, so each driver runs
against the project's own restatement of that engine's contract (``kvtier.contracts``), or against
the engine's real classes where it is importable. ``python -m kvtier.drivers.<engine> play`` replays a
workload as one engine instance; ``... bench`` times a batch against memmove of the same bytes.
The shared parts (workload file, page bytes, summary, command line) are in ``workload``.
"""
