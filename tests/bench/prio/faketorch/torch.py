"""A stand-in for the few PyTorch calls of service.py and train.py (selftest.sh runs them with
this directory first on PYTHONPATH; transformers.py beside it for train.py's llama): tensors are
shapes only, and the shapes are checked; a synchronise sleeps a little. It finds Python
mistakes, not PyTorch ones."""
import time

bfloat16, float32, int64 = "bfloat16", "float32", "int64"


class Tensor:
    def __init__(self, *shape, dtype=float32):
        self.shape, self.dtype = tuple(shape), dtype

    def __matmul__(self, other):
        assert self.shape[-1] == other.shape[0], (self.shape, other.shape)
        return Tensor(*self.shape[:-1], other.shape[-1], dtype=self.dtype)

    def t(self):
        assert len(self.shape) == 2
        return Tensor(*self.shape[::-1], dtype=self.dtype)

    def __mul__(self, x):
        return Tensor(*self.shape, dtype=self.dtype)

    def __add__(self, other):
        assert self.shape == other.shape, (self.shape, other.shape)
        return Tensor(*self.shape, dtype=float32 if float32 in (self.dtype, other.dtype) else self.dtype)

    def __getitem__(self, index):
        n = len(index) if isinstance(index, tuple) else 1
        assert n <= len(self.shape)
        return Tensor(*self.shape[n:], dtype=self.dtype)

    def mul_(self, x):
        return self

    def add_(self, other, alpha=1.0):
        assert self.shape == other.shape, (self.shape, other.shape)
        return self

    def item(self):
        assert self.shape == ()
        time.sleep(0.002)
        return 0 if self.dtype == int64 else 0.0

    def argmax(self):
        return Tensor(dtype=int64)

    def backward(self):
        assert self.shape == (), "backward of a scalar loss"


def randn(*shape, device=None, dtype=float32, generator=None):
    assert device == "cuda"
    return Tensor(*shape, dtype=dtype)


def randint(low, high, size, device=None):
    assert device == "cuda" and 0 <= low < high and isinstance(size, tuple)
    return Tensor(*size, dtype=int64)


def zeros_like(t):
    return Tensor(*t.shape, dtype=t.dtype)


def manual_seed(seed):
    pass


class Generator:
    def __init__(self, device=None):
        pass

    def manual_seed(self, seed):
        return self


class optim:
    class AdamW:
        def __init__(self, params, lr=1e-3):
            self.params = list(params)
            assert self.params and all(isinstance(p, Tensor) for p in self.params)

        def step(self):
            pass

        def zero_grad(self, set_to_none=True):
            pass


class nn:
    class functional:
        @staticmethod
        def linear(x, w):
            assert x.shape[-1] == w.shape[1], (x.shape, w.shape)
            return Tensor(*x.shape[:-1], w.shape[0], dtype=x.dtype)


class _Stream:
    def wait_stream(self, other):
        assert isinstance(other, _Stream)

    def synchronize(self):
        time.sleep(0.0005)


class _Context:
    def __init__(self, arg):
        self.arg = arg

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_CURRENT = _Stream()


class cuda:
    Stream = _Stream

    @staticmethod
    def current_stream():
        return _CURRENT

    stream = _Context
    graph = _Context

    class CUDAGraph:
        def replay(self):
            pass
