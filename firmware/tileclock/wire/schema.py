"""Schemas: what a JSON object from outside must carry, field by field, checked after `decoder.load`.

A schema is an `Obj` (the fields an object must carry and those it may, name -> kind); a kind is
the name of a test in a table of kinds (`"natural"`, `"side"`...), a nested `Obj`, `Nullable(kind)`
or `ListOf(kind)`. Unknown fields pass (a newer clock may add some); a known one of the wrong kind,
or a required one missing, is a `WireError` (wrong_kind, missing_field) naming the field by its
dotted path (`end.summary.A.turns`).
"""

from dataclasses import dataclass, field

from .decoder import Reason, WireError, cut


@dataclass(frozen=True)
class Obj:
    """A JSON object: the fields it must carry and those it may carry (name -> kind)."""

    fields: dict = field(default_factory=dict)
    optional: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Nullable:
    """`kind`, or JSON null."""

    kind: object


@dataclass(frozen=True)
class ListOf:
    """A JSON array of at most `max_items` values, each of `kind`."""

    kind: object
    max_items: int = 1000


def integer(value):
    """Whether `value` is a JSON integer (not a bool, which Python counts as one)."""
    return isinstance(value, int) and not isinstance(value, bool)


def natural(value):
    """Whether `value` is a JSON integer of 0 or more."""
    return integer(value) and value >= 0


#: The kinds every schema may name; a room adds its own (`records.KINDS`).
BASIC = {
    "int": integer,
    "natural": natural,
    "natural_or_null": lambda value: value is None or natural(value),
    "int_or_null": lambda value: value is None or integer(value),
    "str": lambda value: isinstance(value, str),
    "str_or_null": lambda value: value is None or isinstance(value, str),
    "bool": lambda value: isinstance(value, bool),
    "dict": lambda value: isinstance(value, dict),
}


def check_fields(value, schema, kinds, where):
    """Check object `value`'s fields against `schema` (an `Obj`); `where` names it in errors."""
    for name, kind in schema.fields.items():
        if name not in value:
            raise WireError(Reason.MISSING_FIELD, f"{where}: field {name!r} missing", f"{where}.{name}")
        check(value[name], kind, kinds, where, name)
    for name, kind in schema.optional.items():
        if name in value:
            check(value[name], kind, kinds, where, name)


def check(value, kind, kinds, where, name):
    """Check one field `name` of the object at `where` against `kind`."""
    if kind.__class__ is str:  # most fields: one test, and no path worked out unless it fails
        if kinds[kind](value):
            return
    elif isinstance(kind, Nullable):
        if value is None:
            return
        check(value, kind.kind, kinds, where, name)
        return
    elif isinstance(kind, Obj):
        if not isinstance(value, dict):
            raise WireError(
                Reason.WRONG_KIND, f"{where}: field {name!r} missing or not an object", f"{where}.{name}"
            )
        check_fields(value, kind, kinds, f"{where}.{name}")
        return
    elif isinstance(kind, ListOf):
        path = f"{where}.{name}"
        if not isinstance(value, list) or len(value) > kind.max_items:
            raise WireError(
                Reason.WRONG_KIND, f"{where}: field {name!r} is not a list of at most {kind.max_items}", path
            )
        for number, item in enumerate(value):
            check(item, kind.kind, kinds, path, number)
        return
    elif kinds[kind](value):
        return
    raise WireError(
        Reason.WRONG_KIND,
        f"{where}: field {name!r} = {cut(value)} is not a {kind.replace('_', ' ')}",
        f"{where}.{name}",
    )
