"""kvtier's Python client: attach to a running ``kvtier serve`` over the IPC protocol and read and
write KV page bytes in place in the engine's shared page pool (through ``libkvtier_client.so``, which
an installed package carries beside this file), and derive page keys (``kvtier.keys``) from tokens or
from an inference engine's own page ids.

    import kvtier
    root = kvtier.namespace_root("my-model@rev", "bf16/page16/tp1")
    keys = kvtier.page_keys(root, tokens, 16)                        # from tokens
    keys = [kvtier.keys.sglang_page_key(root, h) for h in hashes]    # from SGLang's page hashes
    with kvtier.Client("/dev/shm/kvtier-pool.sock", namespaces=[root]) as c:
        hit = c.lookup(keys).pool_pages

``python -m kvtier stats --socket PATH`` and ``python -m kvtier lookup ...`` check a running engine.
"""
from . import keys
from ._client import *  # noqa: F401,F403
from ._client import __all__ as _client_all
from .keys import lmcache_chunk_key, lmcache_page_key, sglang_page_key, vllm_block_hash_bytes, vllm_offload_key, vllm_offload_page_key, vllm_page_key


def _version() -> str:
    try:
        from ._version import VERSION  # written into the wheel by the build backend
        return VERSION
    except ImportError:
        from ._project import checkout_pom, pom_version
        try:
            return pom_version(checkout_pom())
        except (OSError, ValueError):
            return "0+unknown"


__version__ = _version()
__all__ = list(_client_all) + ["keys", "lmcache_chunk_key", "lmcache_page_key", "sglang_page_key", "vllm_block_hash_bytes", "vllm_offload_key", "vllm_page_key", "vllm_offload_page_key",
                               "__version__"]
