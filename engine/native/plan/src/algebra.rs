//! The parts of the query algebra the native runtime evaluates itself: RDF terms, triple
//! patterns, FILTER expressions, SEQ operands and the window. Constructs it leaves to a
//! SPARQL engine (property paths, EXISTS, GRAPH blocks) are kept as their plan JSON.

use crate::json::{At, Result};
use oxrdf::vocab::{rdf, xsd};
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

impl Term {
    pub fn read(at: &At<'_>) -> Result<Self> {
        if let Ok(iri) = at.get("@iri") {
            return Ok(Term::Iri(iri.string()?));
        }
        if let Ok(id) = at.get("@bnode") {
            return Ok(Term::BlankNode(id.string()?));
        }
        let value = at.get("@literal")?.string()?;
        if let Ok(language) = at.get("language") {
            return Ok(Term::Literal {
                value,
                datatype: rdf::LANG_STRING.as_str().to_owned(),
                language: Some(language.string()?),
            });
        }
        Ok(Term::Literal {
            value,
            datatype: at.get("datatype")?.string()?,
            language: None,
        })
    }

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

/// A position of a triple pattern: a variable, a constant, or (predicates) a property path.
#[derive(Debug, Clone, PartialEq)]
pub enum PatternTerm {
    Var(String),
    Term(Term),
    Path(Value),
}

impl PatternTerm {
    pub fn read(at: &At<'_>) -> Result<Self> {
        match at.tag() {
            Ok("Var") => Ok(PatternTerm::Var(at.get("name")?.string()?)),
            Ok("Path") => Ok(PatternTerm::Path(at.value.clone())),
            Ok(other) => at.error(format!(
                "expected a variable, a term or a path, found a {other}"
            )),
            Err(_) => Term::read(at).map(PatternTerm::Term),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct TriplePattern {
    pub subject: PatternTerm,
    pub predicate: PatternTerm,
    pub object: PatternTerm,
}

impl TriplePattern {
    pub fn read(at: &At<'_>) -> Result<Self> {
        at.typed("TriplePattern")?;
        Ok(TriplePattern {
            subject: PatternTerm::read(&at.get("subject")?)?,
            predicate: PatternTerm::read(&at.get("predicate")?)?,
            object: PatternTerm::read(&at.get("object")?)?,
        })
    }
}

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

impl Expr {
    pub fn read(at: &At<'_>) -> Result<Self> {
        match at.tag()? {
            "EVar" => Ok(Expr::Var(at.get("name")?.string()?)),
            "ETerm" => Ok(Expr::Term(Term::read(&at.get("term")?)?)),
            "ECall" => Ok(Expr::Call {
                op: at.get("op")?.string()?,
                args: at
                    .get("args")?
                    .items()?
                    .iter()
                    .map(Expr::read)
                    .collect::<Result<_>>()?,
                distinct: at.get("distinct")?.bool()?,
            }),
            "EExists" => Ok(Expr::Exists {
                negated: at.get("negated")?.bool()?,
                pattern: at.get("pattern")?.value.clone(),
            }),
            other => at.error(format!("expected an expression, found a {other}")),
        }
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

impl Operand {
    pub fn read(at: &At<'_>) -> Result<Self> {
        let operands = |at: &At<'_>| -> Result<Vec<Operand>> {
            at.get("operands")?
                .items()?
                .iter()
                .map(Operand::read)
                .collect()
        };
        match at.tag()? {
            "GpmRef" => Ok(Operand::Gpm(at.get("name")?.string()?)),
            "Conjunction" => Ok(Operand::And(operands(at)?)),
            "Disjunction" => Ok(Operand::Or(operands(at)?)),
            other => at.error(format!("expected an operand, found a {other}")),
        }
    }

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

impl Window {
    pub fn read(at: &At<'_>) -> Result<Self> {
        at.typed("Window")?;
        let tumbling = at.get("tumbling")?.bool()?;
        let kind = at.get("kind")?;
        let amount = at.get("amount")?;
        let span = match kind.value.as_str() {
            None if kind.is_null() => WindowSpan::Unbounded,
            Some("events") => WindowSpan::Events(amount.usize()? as u64),
            Some("time") => match nanoseconds(amount.decimal()?) {
                Some(ns) => WindowSpan::Nanoseconds(ns),
                None => {
                    return amount.error("not a non-negative number of seconds to the nanosecond")
                }
            },
            _ => return kind.error("expected \"time\", \"events\" or null"),
        };
        Ok(Window { span, tumbling })
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
