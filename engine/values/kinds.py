"""What an expression value can be: the kind codes, the computed value types and the error type.

An expression value is one of:

- a pyoxigraph term (``NamedNode``, ``BlankNode``, ``Literal``) read from a variable or a
  constant: it keeps its exact lexical form and datatype (``STR``, ``DATATYPE`` and
  ``sameTerm`` see the term as written);
- a computed literal, held as a plain Python value: ``bool`` (xsd:boolean), ``int``
  (xsd:integer), ``decimal.Decimal`` (xsd:decimal), ``float`` (xsd:double), ``F32``
  (xsd:float, a float subclass rounded to single precision), ``str`` (xsd:string / simple
  literal) or ``LangStr`` (a language-tagged string), or a ``NamedNode`` (from ``IRI()``,
  ``DATATYPE()``).

``literals.info(v)`` classifies any value as ``(kind, value)`` with the codes below.

Errors are raised as ``ExprError`` (plus ``ArithmeticError``/``ValueError``/``KeyError``
from Python itself, see ``ERRORS``); a FILTER turns any of them into false.
"""

from __future__ import annotations


class ExprError(Exception):
    """A SPARQL expression evaluation error (a FILTER treats it as false)."""


#: Everything expression evaluation may raise for an error (an unbound variable read as
#: ``mapping[name]`` is a KeyError; Decimal and float failures are ArithmeticError/ValueError).
ERRORS = (ExprError, ArithmeticError, ValueError, KeyError)

K_INT, K_DEC, K_FLT, K_DBL = 0, 1, 2, 3  # numerics: kind <= K_DBL, in promotion order
K_STR, K_LANG, K_BOOL, K_DT = 4, 5, 6, 7
K_OTHER = 8  # a literal of a datatype without operator support here (value: the Literal)
K_BAD = 9  # an ill-typed literal of a supported datatype (value: (family, Literal))
K_IRI, K_BNODE = 10, 11

#: The datatype families of an ill-typed literal (``K_BAD``).
FAMILY_NUMERIC, FAMILY_BOOLEAN, FAMILY_DATETIME = "numeric", "boolean", "dateTime"


class F32(float):
    """A computed xsd:float (the float value is already rounded to single precision)."""

    __slots__ = ()


class LangStr(tuple):
    """A computed language-tagged string: ``(text, lang)``."""

    __slots__ = ()

    def __new__(cls, text: str, lang: str) -> LangStr:
        return tuple.__new__(cls, (text, lang))
