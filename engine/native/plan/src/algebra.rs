//! The parts of the query algebra the native runtime evaluates itself: RDF terms, triple
//! patterns, FILTER expressions, SEQ operands and the window, read from the plan's JSON.
//! Constructs it leaves to a SPARQL engine (property paths, EXISTS, GRAPH blocks) are kept
//! as their plan JSON.

use crate::json::{dataclass, nullable, unexpected, via_tagged, Tagged};
use oxrdf::vocab::{rdf, xsd};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// An RDF term as the plan writes it (`{"@iri"}`, `{"@bnode"}`, `{"@literal", ...}`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Term {
    Iri(String),
    BlankNode(String),
    Literal {
        value: String,
        datatype: String,
        language: Option<String>,
    },
}

impl<'de> Deserialize<'de> for Term {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Encoded {
            #[serde(rename = "@iri")]
            iri: Option<String>,
            #[serde(rename = "@bnode")]
            bnode: Option<String>,
            #[serde(rename = "@literal")]
            literal: Option<String>,
            datatype: Option<String>,
            language: Option<String>,
        }
        let t = Encoded::deserialize(d)?;
        match (t.iri, t.bnode, t.literal) {
            (Some(iri), _, _) => Ok(Term::Iri(iri)),
            (_, Some(id), _) => Ok(Term::BlankNode(id)),
            (_, _, Some(value)) => match (t.language, t.datatype) {
                (Some(language), _) => Ok(Term::Literal {
                    value,
                    datatype: rdf::LANG_STRING.as_str().to_owned(),
                    language: Some(language),
                }),
                (None, Some(datatype)) => Ok(Term::Literal {
                    value,
                    datatype,
                    language: None,
                }),
                (None, None) => Err(D::Error::missing_field("datatype")),
            },
            _ => Err(D::Error::custom(
                "expected a term: {\"@iri\"}, {\"@bnode\"} or {\"@literal\"}",
            )),
        }
    }
}

impl Term {
    /// N-Triples spelling (the tie-break of the match order, docs/decisions.md 4).
    pub fn to_ntriples(&self) -> String {
        match self {
            Term::Iri(iri) => format!("<{iri}>"),
            Term::BlankNode(id) => format!("_:{id}"),
            Term::Literal {
                value,
                datatype,
                language,
            } => {
                let quoted = serde_json::to_string(value).unwrap_or_default();
                match language {
                    Some(lang) => format!("{quoted}@{lang}"),
                    None if datatype == xsd::STRING.as_str() => quoted,
                    None => format!("{quoted}^^<{datatype}>"),
                }
            }
        }
    }
}

/// `{"@type": "Var", "name": ...}` and the like: a dataclass with a name.
#[derive(Deserialize)]
struct Named {
    name: String,
}

/// A position of a triple pattern: a variable, a constant, or (predicates) a property path.
#[derive(Debug, Clone, PartialEq)]
pub enum PatternTerm {
    Var(String),
    Term(Term),
    Path(Value),
}

impl Tagged for PatternTerm {
    const WHAT: &'static str = "a variable, a term or a path";
    fn fields<'de, D: Deserializer<'de>>(tag: &str, fields: D) -> Result<Self, D::Error> {
        match tag {
            "Var" => Ok(PatternTerm::Var(Named::deserialize(fields)?.name)),
            "Path" => {
                let mut path = serde_json::Map::deserialize(fields)?;
                path.insert("@type".to_owned(), "Path".into());
                Ok(PatternTerm::Path(Value::Object(path)))
            }
            other => Err(unexpected(Self::WHAT, other)),
        }
    }
    fn untagged(term: Value) -> serde_json::Result<Self> {
        Term::deserialize(term).map(PatternTerm::Term)
    }
}

via_tagged!(PatternTerm);

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(remote = "Self")]
pub struct TriplePattern {
    pub subject: PatternTerm,
    pub predicate: PatternTerm,
    pub object: PatternTerm,
}

dataclass!(TriplePattern = "TriplePattern");

/// A FILTER expression: SPARQL operators and functions by name (`op`: `>`, `&&`, `STR`, a
/// function IRI, ...), as the Python compiler reads them.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Var(String),
    Term(Term),
    Call {
        op: String,
        args: Vec<Expr>,
        distinct: bool,
    },
    /// `EXISTS`/`NOT EXISTS`: a graph pattern, kept as the plan's JSON.
    Exists {
        negated: bool,
        pattern: Value,
    },
}

impl Tagged for Expr {
    const WHAT: &'static str = "an expression";
    fn fields<'de, D: Deserializer<'de>>(tag: &str, fields: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct ETerm {
            term: Term,
        }
        #[derive(Deserialize)]
        struct ECall {
            op: String,
            args: Vec<Expr>,
            distinct: bool,
        }
        #[derive(Deserialize)]
        struct EExists {
            negated: bool,
            pattern: Value,
        }
        Ok(match tag {
            "EVar" => Expr::Var(Named::deserialize(fields)?.name),
            "ETerm" => Expr::Term(ETerm::deserialize(fields)?.term),
            "ECall" => {
                let ECall { op, args, distinct } = ECall::deserialize(fields)?;
                Expr::Call { op, args, distinct }
            }
            "EExists" => {
                let EExists { negated, pattern } = EExists::deserialize(fields)?;
                Expr::Exists { negated, pattern }
            }
            other => return Err(unexpected(Self::WHAT, other)),
        })
    }
}

via_tagged!(Expr);

impl Expr {
    /// An expression given as its plan JSON (`{"@type": "ECall", ...}`).
    pub fn from_json(text: &str) -> crate::json::Result<Self> {
        crate::json::from_json(text)
    }

    /// The variables the expression reads (outside EXISTS).
    pub fn variables(&self, out: &mut Vec<String>) {
        match self {
            Expr::Var(name) if !out.contains(name) => out.push(name.clone()),
            Expr::Call { args, .. } => args.iter().for_each(|a| a.variables(out)),
            _ => {}
        }
    }
}

/// An operand of a SEQ atom: a GPM, or a conjunction or disjunction of operands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand {
    Gpm(String),
    And(Vec<Operand>),
    Or(Vec<Operand>),
}

impl Tagged for Operand {
    const WHAT: &'static str = "an operand";
    fn fields<'de, D: Deserializer<'de>>(tag: &str, fields: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Operands {
            operands: Vec<Operand>,
        }
        Ok(match tag {
            "GpmRef" => Operand::Gpm(Named::deserialize(fields)?.name),
            "Conjunction" => Operand::And(Operands::deserialize(fields)?.operands),
            "Disjunction" => Operand::Or(Operands::deserialize(fields)?.operands),
            other => return Err(unexpected(Self::WHAT, other)),
        })
    }
}

via_tagged!(Operand);

impl Operand {
    /// As the query writes it: `A`, `(A & B)`, `((A & B) | C)`.
    pub fn text(&self) -> String {
        let join = |ops: &[Operand], sep: &str| {
            format!(
                "({})",
                ops.iter().map(Operand::text).collect::<Vec<_>>().join(sep)
            )
        };
        match self {
            Operand::Gpm(name) => name.clone(),
            Operand::And(ops) => join(ops, " & "),
            Operand::Or(ops) => join(ops, " | "),
        }
    }
}

/// WITHIN: a time span in nanoseconds (exact, docs/decisions.md 34), a number of events, or
/// nothing (unbounded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowSpan {
    Unbounded,
    Nanoseconds(u128),
    Events(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub span: WindowSpan,
    pub tumbling: bool,
}

/// The window as written: `kind` `"time"` (`amount` `{"@decimal": seconds}`), `"events"`
/// (`amount` a count) or null (`amount` unread).
#[derive(Deserialize)]
#[serde(remote = "Self")]
struct WindowJson {
    #[serde(deserialize_with = "nullable")]
    kind: Option<String>,
    amount: Value,
    tumbling: bool,
}

dataclass!(WindowJson = "Window");

impl<'de> Deserialize<'de> for Window {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = <WindowJson as Deserialize>::deserialize(d)?;
        let span = match w.kind.as_deref() {
            None => WindowSpan::Unbounded,
            Some("events") => match w.amount.as_u64() {
                Some(n) => WindowSpan::Events(n),
                None => return Err(D::Error::custom("amount: expected a number of events")),
            },
            Some("time") => match w.amount["@decimal"].as_str().and_then(nanoseconds) {
                Some(ns) => WindowSpan::Nanoseconds(ns),
                None => {
                    return Err(D::Error::custom(
                        "amount: not a non-negative number of seconds to the nanosecond",
                    ))
                }
            },
            Some(other) => {
                return Err(D::Error::custom(format!(
                    "kind: expected \"time\", \"events\" or null, found {other:?}"
                )))
            }
        };
        Ok(Window {
            span,
            tumbling: w.tumbling,
        })
    }
}

/// A non-negative decimal number of seconds (`"1800"`, `"0.3"`, `"0.300"`, `"3E+2"`) in
/// nanoseconds, exactly; None if it is negative, malformed or finer than a nanosecond.
pub fn nanoseconds(text: &str) -> Option<u128> {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], text[i + 1..].parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.starts_with('-')
        || !(whole
            .chars()
            .chain(fraction.chars())
            .all(|c| c.is_ascii_digit()))
    {
        return None;
    }
    let digits: String = format!("{whole}{fraction}");
    if digits.is_empty() {
        return None;
    }
    // value = digits * 10^(exponent - len(fraction)); in nanoseconds: * 10^9
    let scale = exponent - fraction.len() as i32 + 9;
    let mut value: u128 = digits.parse().ok()?;
    if scale >= 0 {
        value = value.checked_mul(10u128.checked_pow(scale as u32)?)?;
    } else {
        let divisor = 10u128.checked_pow((-scale) as u32)?;
        if !value.is_multiple_of(divisor) {
            return None;
        }
        value /= divisor;
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_lengths_are_exact_nanoseconds() {
        assert_eq!(nanoseconds("0.3"), Some(300_000_000));
        assert_eq!(nanoseconds("0.300"), Some(300_000_000));
        assert_eq!(nanoseconds("1800"), Some(1_800_000_000_000));
        assert_eq!(nanoseconds("3E+2"), Some(300_000_000_000));
        assert_eq!(nanoseconds("1.5E-3"), Some(1_500_000));
        assert_eq!(nanoseconds("0.0000000001"), None);
        assert_eq!(nanoseconds("-1"), None);
        assert_eq!(nanoseconds("1x"), None);
    }

    #[test]
    fn terms_are_spelled_in_ntriples() {
        let lit = Term::Literal {
            value: "a\"b".to_owned(),
            datatype: "http://www.w3.org/2001/XMLSchema#integer".to_owned(),
            language: None,
        };
        assert_eq!(
            lit.to_ntriples(),
            "\"a\\\"b\"^^<http://www.w3.org/2001/XMLSchema#integer>"
        );
        assert_eq!(
            Term::Iri("http://ex.org/a".to_owned()).to_ntriples(),
            "<http://ex.org/a>"
        );
    }
}
