# JAX (run with XLA_PYTHON_CLIENT_ALLOCATOR=platform so each array is its own allocation): the largest
# array (1 GiB) comes from a known line of make_big(); prints "EXPECT file:line".
import inspect
import jax
import jax.numpy as jnp


def make_big():
    make_big.line = inspect.currentframe().f_lineno + 1
    return jnp.zeros((256, 1024, 1024), dtype=jnp.float32)


small = [jnp.ones(1 << 20) for _ in range(4)]
big = make_big()
big.block_until_ready()
print("EXPECT %s:%d" % (__file__, make_big.line))
