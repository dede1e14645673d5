"""Adapters that plug kvtier into inference engines through each engine's own storage contract.

Empty for now: the SGLang, vLLM and LMCache adapters (``kvtier.adapters.sglang``, ``.vllm``,
``.lmcache``) come here. They derive page keys from the engines' own page ids with ``kvtier.keys``.
"""
