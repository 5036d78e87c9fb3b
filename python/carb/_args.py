"""Checks of the arguments the Python surface takes: checked, not converted (True is not 1, "0.5"
is not a number, b"dir" is not the path "b'dir'")."""
import decimal
import math
import numbers
import os

from ._carb import InputError


def _table_in_memory(what):
    return InputError(f"{what} is a table in memory; carb reads measurements from dataset CSVs with their "
                      "provenance: give the CSV's path (a DataFrame can be written with df.to_csv(path, index=False))")


def _short(v, most=200):
    """repr(v), cut to `most` characters (a hostile tester: a 50-row table was a 12 KB message)."""
    text = _shown(v)
    return text if len(text) <= most else text[:most] + f"... ({len(text)} characters)"


def _path(p, what):
    """A file system path as text: str, bytes (decoded as the OS does) or os.PathLike. Thirty-second
    hostile pass: save(b'ud') wrote a directory named "b'ud'" (str() of the bytes)."""
    if isinstance(p, dict) or hasattr(p, "columns"):
        raise _table_in_memory(what)
    try:
        text = os.fsdecode(os.fspath(p))
    except TypeError:
        raise InputError(f"{what} is {_short(p)}, not a path (str, bytes or os.PathLike)") from None
    if "\0" in text:  # no file has one in its name (a raw pybind11 TypeError before)
        raise InputError(f"{what} is {p!r}: a path cannot hold a NUL character")
    try:  # a lone surrogate no file system name holds (a raw pybind11 TypeError before)
        os.fsencode(text)
    except UnicodeEncodeError:
        raise InputError(f"{what} is {p!r}: it cannot be encoded as a file name") from None
    return text


def _paths(data, what):
    """One path or an iterable of them."""
    if isinstance(data, (str, bytes)) or hasattr(data, "__fspath__"):
        return [_path(data, what)]
    # A table in memory (a dict of columns, a DataFrame) iterates as its column names, which were then
    # opened as files (a hostile tester: "family: cannot open for reading").
    if isinstance(data, dict) or hasattr(data, "columns"):
        raise _table_in_memory(what)
    try:
        items = list(data)
    except TypeError:
        raise InputError(f"{what} is {data!r}, not a path or a list of paths") from None
    return [_path(d, what) for d in items]


def _flag(v, what):
    """A yes/no given as an argument: True or False, not 1 or "yes"."""
    if not isinstance(v, bool):
        raise InputError(f"{what} is {_shown(v)}, not True or False")
    return v


def _shown(v):
    """repr(v), but an int too long for Python to print (over 4,300 digits) by its size."""
    try:
        return repr(v)
    except ValueError:
        return f"an integer of about {int(v.bit_length() * 0.30103) + 1} digits"


def _scalar(v, what):
    """A number given as an argument: checked, not converted (True was a 1 ms budget, "0.5" a string
    budget that float() accepted)."""
    # A Decimal is a number too (not a numbers.Real; a hostile tester's Decimal("50") budget was "not a number").
    if isinstance(v, bool) or type(v).__name__ == "bool_" or not isinstance(v, (numbers.Real, decimal.Decimal)):
        raise InputError(f"{what} is {_shown(v)}, not a number")
    try:
        return float(v)
    except OverflowError:  # an int past any float (10**400): a raw OverflowError before
        raise InputError(f"{what} is {_shown(v)}, out of range") from None
    except ValueError:  # Decimal("sNaN") cannot become a float (hundred-and-fourth hostile pass)
        raise InputError(f"{what} is {_shown(v)}, not a number") from None


def _whole_arg(v, what):
    """A whole number given as an argument (a count, a batch size): True is not 1."""
    x = _scalar(v, what)
    if not math.isfinite(x) or x != math.floor(x):  # floor(nan) raised ValueError, floor(inf) OverflowError
        raise InputError(f"{what} is {_shown(v)}, not a whole number")
    if abs(x) > 2**31 - 1:
        raise InputError(f"{what} is {_shown(v)}, out of range")
    return int(x)


def _seed(v, what="seed"):
    """A seed: a whole number the C++ side takes unsigned (seed=-1 was a raw TypeError)."""
    x = _scalar(v, what)
    if not math.isfinite(x) or x != math.floor(x) or not 0 <= x <= 2**32 - 1:
        raise InputError(f"{what} is {_shown(v)}, not a whole number in 0..4294967295")
    return int(x)
