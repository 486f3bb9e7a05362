"""A stand-in for the few PyTorch calls of service.py and train.py (selftest.sh runs them with
this directory first on PYTHONPATH; transformers.py beside it for train.py's llama): tensors are
shapes only, and the shapes are checked; a synchronise sleeps a little. It finds Python
mistakes, not PyTorch ones. FAKETORCH_TRACE=FILE: the calls that order work (graph replays,
.item(), synchronisations, generate()) are written there, one a line, as the process ends."""
import atexit
import os
import time

bfloat16, float32, int64 = "bfloat16", "float32", "int64"
TRACE = []
if os.environ.get("FAKETORCH_TRACE"):
    atexit.register(lambda: open(os.environ["FAKETORCH_TRACE"], "w").write("".join(x + "\n" for x in TRACE)))


def trace(what):
    TRACE.append(what)


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
        index = index if isinstance(index, tuple) else (index,)
        assert len(index) <= len(self.shape)
        kept = [len(range(*i.indices(n))) for i, n in zip(index, self.shape) if isinstance(i, slice)]
        for i, n in zip(index, self.shape):
            if isinstance(i, int):
                assert -n <= i < n, (index, self.shape)
        return Tensor(*(kept + list(self.shape[len(index):])), dtype=self.dtype)

    def __int__(self):
        assert self.shape in ((), (1,)), self.shape
        return 0

    def copy_(self, src, non_blocking=False):
        assert self.shape == src.shape, (self.shape, src.shape)
        return self

    def index_select(self, dim, index):
        assert dim == 0 and len(index.shape) == 1 and index.dtype == int64, (dim, index.shape)
        return Tensor(index.shape[0], *self.shape[1:], dtype=self.dtype)

    def mul_(self, x):
        return self

    def add_(self, other, alpha=1.0):
        assert self.shape == other.shape, (self.shape, other.shape)
        return self

    def item(self):
        assert self.shape == ()
        trace("item")
        time.sleep(0.002)
        return 0 if self.dtype == int64 else 0.0

    def argmax(self, dim=None):
        if dim is None:
            return Tensor(dtype=int64)
        assert dim in (-1, len(self.shape) - 1), dim
        return Tensor(*self.shape[:-1], dtype=int64)

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


ones_like = zeros_like


def zeros(*shape, device=None, dtype=float32, pin_memory=False):
    assert device in (None, "cuda") and not (pin_memory and device == "cuda")
    return Tensor(*shape, dtype=dtype)


def add(a, b, out=None):
    assert out is None or out.shape == a.shape, (a.shape, out.shape)
    return out if out is not None else Tensor(*a.shape, dtype=a.dtype)


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

    def wait_event(self, event):
        assert isinstance(event, _Event) and event.recorded, "a stream waits for an event not recorded"
        trace("wait event")

    def synchronize(self):
        trace("stream sync")
        time.sleep(0.0005)


class _Event:
    def __init__(self):
        self.recorded = False

    def record(self, stream=None):
        assert stream is None or isinstance(stream, _Stream), stream
        self.recorded = True
        if stream is not None and stream is not _CURRENT:
            trace("record on a side stream")

    def query(self):
        """Not done at the first query after a record, done at the next (0.5 ms later)."""
        assert self.recorded, "an event queried before it was recorded"
        trace("event query")
        self.queries = getattr(self, "queries", 0) + 1
        if self.queries % 2:
            time.sleep(0.0005)
            return False
        return True

    def synchronize(self):
        assert self.recorded, "an event synchronised before it was recorded"
        trace("event sync")
        time.sleep(0.0005)


class _Context:
    def __init__(self, arg):
        self.arg = arg

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_CURRENT = _Stream()


class device(_Context):
    """torch.device("cuda") as a context: the default device of new tensors."""


def inference_mode():
    return _Context(None)


class cuda:
    Stream = _Stream
    Event = _Event

    @staticmethod
    def current_stream():
        return _CURRENT

    @staticmethod
    def synchronize():
        trace("context sync")
        time.sleep(0.0005)

    stream = _Context
    graph = _Context

    class CUDAGraph:
        def replay(self):
            trace("replay")
