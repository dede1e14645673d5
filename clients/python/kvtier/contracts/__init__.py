"""The project's own restatements of the inference engines' storage contracts (class names, method
names, signatures and semantics, from their public source as summarised in the project's notes), so
that the adapters and their drivers run where the engines cannot be installed. An adapter subclasses
the engine's real base class when the engine is importable and this restatement otherwise; each
module says which it used (``REAL``)."""
