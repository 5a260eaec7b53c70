"""paradnn's JAX runner: the paradnn-runner protocol (docs/contracts.md) with
the ParaDnn families built in plain JAX. Everything but jax_train.py and the
device parts of platform_info.py imports without JAX."""
