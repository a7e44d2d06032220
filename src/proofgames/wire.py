"""Messages as plain data: V's canonical copies of what a party sends, and the wire format.

Every protocol treats a party as untrusted code.  Whatever a party returns passes through
one of the ``as_*`` functions below before any check: each accepts only plain values
(exact built-in ints, floats, strings and bytes, lists of them, and numpy arrays of a
numeric dtype), never calls a method of the party's objects, and returns a fresh value V
owns (ints, bytes, read-only arrays).  Anything else raises :class:`Malformed`, which the
driver turns into the sender's forfeit with the reason recorded.

The same plain values travel between processes (``isolation="process"``) as JSON, one
object per line; :func:`encode` and :func:`decode` implement it.  Values that JSON cannot
hold are tagged objects:

* bytes: ``{"__bytes__": "<base64>"}``;
* arrays: ``{"__array__": {"dtype": "<i8", "shape": [n, ...], "data": "<base64>"}}``
  (little-endian ``bool``, ``int8``..``int64``, ``uint8``..``uint64``, ``float32``,
  ``float64`` only);
* non-finite floats: ``{"__float__": "nan" | "inf" | "-inf"}``;
* compressed bytes: ``{"__zlib__": "<base64 of zlib data>"}``, sent only to a peer that
  listed ``"zlib"`` in its ``encodings`` (the hello, the ready), and only where shorter.
  A long configuration crosses the wire in a hundred bytes instead of its whole tape
  (bb5's 12,289 cells: about 90), which saves both ends most of the encoding.  It
  inflates to at most :data:`MAX_LINE` bytes a message: more is the sender's forfeit.

The message schema of each protocol is in ``docs/wire.md``.

Example:
    >>> import numpy as np
    >>> from proofgames.wire import as_int_array, decode, encode
    >>> decode(encode({"values": np.arange(3), "w": b"01"}))["values"].tolist()
    [0, 1, 2]
    >>> as_int_array([1, 2], (2,), "entries").flags.writeable
    False
    >>> as_int_array([True, 2], (2,), "entries")
    Traceback (most recent call last):
    ...
    proofgames.wire.Malformed: entries must be integers (item 0 is a bool)
"""

from __future__ import annotations

import base64
import json
import math
import threading
import zlib
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._configuration import Configuration

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]
_NUMPY_INTS = (
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
)
_NUMPY_FLOATS = (np.float16, np.float32, np.float64)
_DTYPES = {"|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f4", "<f8"}
MAX_LINE = 256 * 1024 * 1024  # the longest message a party may send, in bytes
ENCODINGS = ("zlib",)
"""The optional encodings this side reads and, to a peer that lists them, writes."""
COMPRESS_MIN = 1024
"""Bytes values at least this long are compressed (zlib level 1) for a peer that reads it."""


class Malformed(Exception):
    """A message that is not the plain data its schema asks for.

    Args:
        reason: what is wrong, for the forfeit record.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def as_int(x: object, what: str) -> int:
    """An exact integer (not a bool, not a subclass): ``int`` or a numpy integer scalar."""
    if type(x) is int:
        return x
    if type(x) in _NUMPY_INTS:
        scalar: Any = x
        return int(scalar)
    raise Malformed(f"{what} must be an integer, got {_kind(x)}")


def as_choice(x: object, choices: tuple[str, ...], what: str) -> str:
    """One of ``choices``, sent as an exact ``str``."""
    if type(x) is str and x in choices:
        return str(x)
    shown = repr(x)[:60] if type(x) in (str, int, float) else _kind(x)
    raise Malformed(f"{what} must be one of {list(choices)}, got {shown}")


def as_bytes(x: object, what: str) -> bytes:
    """Exact ``bytes`` or ``bytearray`` (copied), or a list of ints in 0..255."""
    if type(x) is bytes:
        return x
    if type(x) is bytearray:
        return bytes(x)
    if type(x) in (list, tuple):
        vals = _plain_ints(x, what)  # type: ignore[arg-type]
        if any(not 0 <= v < 256 for v in vals):
            raise Malformed(f"{what} symbols must lie in 0..255")
        return bytes(vals)
    raise Malformed(f"{what} must be bytes, got {_kind(x)}")


def as_int_array(x: object, shape: tuple[int, ...], what: str) -> IntArray:
    """A read-only ``int64`` copy of an integer array or list of ints, of ``shape``."""
    if type(x) is np.ndarray:
        if x.shape != shape:  # checked before any copy: an oversized answer costs V nothing
            raise Malformed(f"{what} must have shape {shape}, got {x.shape}")
        if x.dtype.kind not in "iu":
            raise Malformed(f"{what} must be integers, got an array of dtype {x.dtype}")
        if x.dtype == np.uint64 and x.size and int(x.max()) >= 2**63:
            raise Malformed(f"{what} holds an integer too large for int64")
        out = np.array(x, dtype=np.int64, copy=True)
    elif type(x) in (list, tuple):
        if len(shape) != 1 or len(x) != shape[0]:  # type: ignore[arg-type]
            raise Malformed(f"{what} must be a list of {math.prod(shape)} integers")
        try:
            out = np.array(_plain_ints(x, what), dtype=np.int64)  # type: ignore[arg-type]
        except OverflowError:
            raise Malformed(f"{what} holds an integer too large for int64") from None
    else:
        raise Malformed(f"{what} must be an integer array, got {_kind(x)}")
    if out.shape != shape:
        raise Malformed(f"{what} must have shape {shape}, got {out.shape}")
    out.setflags(write=False)
    return out


def as_positions(x: object, what: str) -> IntArray:
    """A read-only ``int64`` copy of a 1-D list or array of positions (or one int)."""
    if type(x) is int or type(x) in _NUMPY_INTS:
        return as_int_array([x], (1,), what)
    if type(x) is np.ndarray and x.ndim != 1:
        raise Malformed(f"{what} must be one-dimensional, got shape {x.shape}")
    n = len(x) if type(x) in (list, tuple, np.ndarray) else -1  # type: ignore[arg-type]
    return as_int_array(x, (n,), what)


def as_float_array(x: object, n: int, what: str) -> FloatArray:
    """A read-only ``float64`` copy of ``n`` numbers (non-finite values are kept, as NaN/inf)."""
    if type(x) is np.ndarray:
        if x.shape != (n,):
            raise Malformed(f"{what} must hold {n} numbers, got shape {x.shape}")
        if x.dtype.kind not in "iuf" or x.dtype.itemsize > 8:
            raise Malformed(f"{what} must be numbers, got an array of dtype {x.dtype}")
        out = np.array(x, dtype=np.float64, copy=True)
    elif type(x) in (list, tuple):
        if len(x) != n:  # type: ignore[arg-type]
            raise Malformed(f"{what} must hold {n} numbers, got {len(x)}")  # type: ignore[arg-type]
        items = list(x)  # type: ignore[call-overload]
        for i, v in enumerate(items):
            if type(v) not in (int, float, *_NUMPY_FLOATS, *_NUMPY_INTS):
                raise Malformed(f"{what} must be numbers (item {i} is {_kind(v)})")
        try:
            out = np.array([float(v) for v in items], dtype=np.float64)
        except OverflowError:
            raise Malformed(f"{what} holds an integer too large for a float") from None
    elif n == 1 and type(x) in (int, float, *_NUMPY_FLOATS):
        out = np.array([float(x)], dtype=np.float64)  # type: ignore[arg-type]
    else:
        raise Malformed(f"{what} must be an array of {n} numbers, got {_kind(x)}")
    if out.shape != (n,):
        raise Malformed(f"{what} must hold {n} numbers, got shape {out.shape}")
    out.setflags(write=False)
    return out


def as_bool_array(x: object, n: int, what: str) -> NDArray[np.bool_]:
    """A read-only copy of ``n`` booleans (a ``bool`` array or a list of ``bool``)."""
    if type(x) is np.ndarray and x.dtype == np.bool_:
        out = np.array(x, dtype=np.bool_, copy=True)
    elif type(x) in (list, tuple) and all(type(v) in (bool, np.bool_) for v in x):  # type: ignore[attr-defined]
        out = np.array([bool(v) for v in x], dtype=np.bool_)  # type: ignore[attr-defined]
    else:
        raise Malformed(f"{what} must be {n} booleans, got {_kind(x)}")
    if out.shape != (n,):
        raise Malformed(f"{what} must hold {n} booleans, got shape {out.shape}")
    out.setflags(write=False)
    return out


def as_configuration(x: object, what: str) -> Configuration:
    """V's own :class:`Configuration` from an exact ``Configuration`` or its plain dict form.

    A subclass is refused (it could override comparison); the fields must be plain ints and
    bytes, read once, and the result is a fresh object.
    """
    if type(x) is Configuration:
        fields = (
            object.__getattribute__(x, "state"),
            object.__getattribute__(x, "head"),
            object.__getattribute__(x, "tape"),
        )
    elif type(x) is dict:
        if set(x) != {"state", "head", "tape"}:
            raise Malformed(f"{what} must have exactly the keys state, head, tape")
        fields = (x["state"], x["head"], x["tape"])
    else:
        raise Malformed(f"{what} must be a Configuration, got {_kind(x)}")
    state, head = as_int(fields[0], f"{what}'s state"), as_int(fields[1], f"{what}'s head")
    return Configuration(state, head, as_bytes(fields[2], f"{what}'s tape"))


def configuration_dict(c: Configuration) -> dict[str, Any]:
    """The plain form of a configuration (what travels on the wire)."""
    return {"state": c.state, "head": c.head, "tape": c.tape}


def _plain_ints(items: list[object] | tuple[object, ...], what: str) -> list[int]:
    out = []
    for i, v in enumerate(items):
        if type(v) is bool or type(v) is np.bool_:
            raise Malformed(f"{what} must be integers (item {i} is a bool)")
        if type(v) is int:
            out.append(v)
        elif type(v) in _NUMPY_INTS:
            out.append(int(v))  # type: ignore[call-overload]
        else:
            raise Malformed(f"{what} must be integers (item {i} is {_kind(v)})")
    return out


def _kind(x: object) -> str:
    """A description of a value that runs none of its code."""
    t = type(x)
    name = type.__getattribute__(t, "__name__")
    return f"a {name}" if isinstance(name, str) else "an object"


# ---------------------------------------------------------------------------- the codec


def encode(obj: object, *, compress: bool = False) -> bytes:
    """One message as a line of JSON (arrays, bytes and non-finite floats tagged).

    Args:
        obj: the message, made of plain values.
        compress: send long bytes values as ``__zlib__`` where that is shorter (only to a
            peer whose ``encodings`` list ``"zlib"``).

    Example:
        >>> line = encode({"tape": bytes(4096)}, compress=True)
        >>> len(line) < 100, decode(line) == {"tape": bytes(4096)}
        (True, True)
    """
    text = json.dumps(_to_json(obj, compress), separators=(",", ":"), allow_nan=False)
    return text.encode() + b"\n"


def decode(line: bytes) -> Any:
    """Parse one line of the wire format into plain values (arrays come back read-only)."""
    if len(line) > MAX_LINE:
        raise Malformed(f"a message of {len(line)} bytes is over the limit of {MAX_LINE}")
    try:
        raw = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise Malformed(f"not JSON: {str(exc)[:80]}") from None
    return _from_json(raw, 0, [MAX_LINE])


def accepts(msg: object) -> bool:
    """Whether a hello or ready lists ``"zlib"`` among its ``encodings`` (a well-formed list).

    Raises:
        Malformed: ``encodings`` is there but is not a list of strings.
    """
    if type(msg) is not dict or "encodings" not in msg:
        return False
    names = msg["encodings"]
    if type(names) is not list or not all(type(n) is str for n in names):
        raise Malformed("encodings must be a list of strings")
    return "zlib" in names


class _Packed:
    """The last few compressed values, both ways: encoded once, sent and read many times.

    A bisection debate sends each configuration's tape again and again (a round's start
    and end are the last round's): ``encode`` finds a bytes object it compressed lately
    (by identity: the cache holds it, so its id is not reused), and ``decode`` a text it
    made or read lately, without compressing or inflating again.  A text read from a
    party is never sent on: what this process sends is always its own compression, so no
    party's choice of encoding (a deflate stream has many for the same bytes) reaches
    another party through V.  Values up to :data:`CACHED_BYTES` only; at most
    :data:`CACHED` of each.
    """

    CACHED = 16
    CACHED_BYTES = 1 << 18

    def __init__(self) -> None:
        self._texts: dict[int, tuple[bytes, str]] = {}  # id(data) -> (data, text)
        self._datas: dict[str, bytes] = {}  # text -> data
        self._lock = threading.Lock()

    def text(self, data: bytes) -> str | None:
        """The ``__zlib__`` text of ``data`` (this very object), if it is cached."""
        hit = self._texts.get(id(data))
        return hit[1] if hit is not None and hit[0] is data else None

    def data(self, text: str) -> bytes | None:
        """The bytes whose ``__zlib__`` text is ``text``, if cached."""
        return self._datas.get(text)

    def keep(self, data: bytes, text: str, *, sent: bool) -> None:
        """Remember that ``text`` inflates to ``data`` (the oldest entries go).

        Only a text this process made (``sent``) is also remembered as the way ``data``
        goes out.
        """
        if len(data) > self.CACHED_BYTES:
            return
        with self._lock:
            if sent:
                self._texts.pop(id(data), None)
                self._texts[id(data)] = (data, text)
            self._datas.pop(text, None)
            self._datas[text] = data
            while len(self._texts) > self.CACHED:
                del self._texts[next(iter(self._texts))]
            while len(self._datas) > self.CACHED:
                del self._datas[next(iter(self._datas))]


_PACKED = _Packed()


def _bytes_json(data: bytes, compress: bool) -> dict[str, str]:
    if compress and len(data) >= COMPRESS_MIN:
        text = _PACKED.text(data)
        if text is not None:
            return {"__zlib__": text}
        packed = zlib.compress(data, 1)
        if len(packed) < len(data):
            text = base64.b64encode(packed).decode()
            _PACKED.keep(data, text, sent=True)
            return {"__zlib__": text}
    return {"__bytes__": base64.b64encode(data).decode()}


def _to_json(obj: Any, compress: bool) -> Any:
    if obj is None or type(obj) in (bool, int, str):
        return obj
    if type(obj) is float:
        return obj if math.isfinite(obj) else {"__float__": repr(obj)}
    if type(obj) in (bytes, bytearray):
        return _bytes_json(bytes(obj), compress)
    if type(obj) is np.ndarray:
        arr = np.ascontiguousarray(obj)
        dt = arr.dtype.newbyteorder("<") if arr.dtype.byteorder == ">" else arr.dtype
        if dt.str not in _DTYPES:
            raise Malformed(f"arrays of dtype {arr.dtype} cannot be sent")
        data = base64.b64encode(arr.astype(dt, copy=False).tobytes()).decode()
        return {"__array__": {"dtype": dt.str, "shape": list(arr.shape), "data": data}}
    if type(obj) in _NUMPY_INTS or type(obj) in _NUMPY_FLOATS or type(obj) is np.bool_:
        return _to_json(obj.item(), compress)
    if type(obj) is Configuration:
        return _to_json(configuration_dict(obj), compress)
    if type(obj) in (list, tuple):
        return [_to_json(v, compress) for v in obj]
    if type(obj) is dict:
        if any(type(k) is not str for k in obj):
            raise Malformed("message keys must be strings")
        return {k: _to_json(v, compress) for k, v in obj.items()}
    raise Malformed(f"{_kind(obj)} cannot be sent as a message")


def _from_json(raw: Any, depth: int, budget: list[int]) -> Any:
    if depth > 64:
        raise Malformed("a message nested more than 64 levels deep")
    if isinstance(raw, list):
        return [_from_json(v, depth + 1, budget) for v in raw]
    if not isinstance(raw, dict):
        return raw
    if len(raw) == 1:
        ((key, val),) = raw.items()
        if key == "__bytes__":
            return _b64(val)
        if key == "__zlib__":
            return _unpacked(val, budget)
        if key == "__float__":
            if val not in ("nan", "inf", "-inf"):
                raise Malformed(f"unknown float {val!r}")
            return float(val)
        if key == "__array__":
            return _array(val)
    return {k: _from_json(v, depth + 1, budget) for k, v in raw.items()}


def _unpacked(text: object, budget: list[int]) -> bytes:
    """One ``__zlib__`` value: from the cache, else inflated (and then cached)."""
    if type(text) is not str:
        raise Malformed("bytes must be base64 text")
    data = _PACKED.data(text)
    if data is None:
        data = _inflate(_b64(text), budget)
        _PACKED.keep(data, text, sent=False)  # read, never sent on as it came
    elif len(data) > budget[0]:
        raise Malformed(f"compressed bytes inflate to more than {MAX_LINE} bytes a message")
    else:
        budget[0] -= len(data)
    return data


def _inflate(packed: bytes, budget: list[int]) -> bytes:
    """Decompress one ``__zlib__`` value, charging its size to the message's budget."""
    inflater = zlib.decompressobj()
    try:
        data = inflater.decompress(packed, budget[0] + 1)
    except zlib.error:
        raise Malformed("compressed bytes are not valid zlib data") from None
    if len(data) > budget[0]:
        raise Malformed(f"compressed bytes inflate to more than {MAX_LINE} bytes a message")
    if not inflater.eof or inflater.unused_data:
        raise Malformed("compressed bytes are not one whole zlib stream")
    budget[0] -= len(data)
    return data


def _b64(val: object) -> bytes:
    if not isinstance(val, str):
        raise Malformed("bytes must be base64 text")
    try:
        return base64.b64decode(val, validate=True)
    except ValueError:
        raise Malformed("bytes are not valid base64") from None


def _array(spec: object) -> NDArray[Any]:
    if not isinstance(spec, dict) or set(spec) != {"dtype", "shape", "data"}:
        raise Malformed("an array needs exactly dtype, shape and data")
    dtype, shape = spec["dtype"], spec["shape"]
    if dtype not in _DTYPES:
        raise Malformed(f"arrays of dtype {dtype!r} are not allowed")
    if not isinstance(shape, list) or not all(type(s) is int and s >= 0 for s in shape):
        raise Malformed(f"bad array shape {shape!r}")
    data = _b64(spec["data"])
    dt = np.dtype(dtype)
    if len(data) != dt.itemsize * math.prod(shape):
        raise Malformed(f"array data has {len(data)} bytes, not {dt.itemsize} x {shape}")
    out = np.frombuffer(data, dtype=dt).reshape(shape).copy()
    out.setflags(write=False)
    return out
