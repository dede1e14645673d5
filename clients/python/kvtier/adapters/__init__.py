"""Adapters that plug kvtier into inference engines through each engine's own storage contract.

- ``kvtier.adapters.sglang``: ``KvtierHiCacheStorage``, a HiCache storage backend SGLang loads with
  ``--hicache-storage-backend dynamic`` (docs/adapters/sglang.md).
- ``kvtier.adapters.vllm``: a secondary tier of vLLM's tiering offloading spec, loaded by module path
  (docs/adapters/vllm.md).
- ``kvtier.adapters.lmcache``: ``KvtierL2Connector``, an LMCache L2 adapter of type ``native_plugin``
  (docs/adapters/lmcache.md).

Each derives page keys from the engine's own page ids with ``kvtier.keys``, answers every call of its
contract with the contract's type (a failure is a miss, never None), and says what it cannot do
(``capabilities()``). ``kvtier.contracts`` restates each contract where the engine is not installed;
``kvtier.drivers`` calls each adapter as its engine does.
"""
