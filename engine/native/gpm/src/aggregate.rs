//! A SELECT's `(expression AS ?v)` over the rows a match's COLLECT timers gathered
//! (docs/decisions.md 71): the rows are one group, and spareval evaluates the expressions as
//! SPARQL 1.1 evaluates a SELECT's expressions over an implicit group, so `AVG`, `COUNT`,
//! `SUM`, `MIN`, `MAX`, `SAMPLE` and `GROUP_CONCAT` mean what they mean in SPARQL (the
//! reference evaluator asks pyoxigraph the same question, `gpm_eval/aggregates.py`).
//!
//! The query is parsed once, over an empty `VALUES` table of the rows' columns; each match
//! fills that table with its rows. spareval prepares, optimises and evaluates it afresh every
//! time (and reads the clock for `NOW()`): ~60k instructions a match, most of program P's
//! `avg-temp`. So the usual expressions, a bare `COUNT`, `SUM`, `AVG`, `MIN` or `MAX` of one
//! column (`Fold`), are folded over the rows here, with the value semantics FILTERs use
//! (`value`, `functions`); the rest, and values a fold does not order (`MIN` of a string),
//! go to spareval. The tests hold the folds to spareval's answers.

use crate::functions::{arithmetic, Arith};
use crate::value::{Number, Value};
use oxrdf::{Dataset, Term, Variable};
use oxsdatatypes::Integer;
use spareval::{QueryEvaluator, QueryResults};
use spargebra::algebra::{AggregateExpression, AggregateFunction, Expression, GraphPattern};
use spargebra::term::GroundTerm;
use spargebra::{Query, SparqlParser};
use std::cmp::Ordering;

/// Why the expressions cannot be evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpressionError(pub String);

impl std::fmt::Display for ExpressionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the SELECT expressions: {}", self.0)
    }
}

impl std::error::Error for ExpressionError {}

/// A query's SELECT expressions, ready to evaluate over rows of `columns`.
#[derive(Debug, Clone)]
pub struct SelectExpressions {
    query: Query,
    /// The output variables, in the order the expressions were written.
    pub outputs: Vec<String>,
    /// Each output's fold, when every expression is one (None: spareval evaluates them).
    folds: Option<Vec<Fold>>,
}

/// An expression folded over the rows without spareval: `COUNT(*)`, or `COUNT`, `SUM`,
/// `AVG`, `MIN`, `MAX` of one column (its index), without DISTINCT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fold {
    CountRows,
    Count(usize),
    Sum(usize),
    Avg(usize),
    Min(usize),
    Max(usize),
}

impl SelectExpressions {
    /// The expressions `(v, text)` of a query with `base` and `prefixes`, over rows whose
    /// values are those of `columns` (variable names).
    pub fn new(
        base: Option<&str>,
        prefixes: &std::collections::BTreeMap<String, String>,
        expressions: &[(String, String)],
        columns: &[String],
    ) -> Result<Self, ExpressionError> {
        let mut text = String::new();
        if let Some(base) = base {
            text.push_str(&format!("BASE <{base}>\n"));
        }
        for (prefix, iri) in prefixes {
            text.push_str(&format!("PREFIX {prefix}: <{iri}>\n"));
        }
        text.push_str("SELECT");
        for (v, expr) in expressions {
            text.push_str(&format!(" ({expr} AS ?{v})"));
        }
        text.push_str(" WHERE { VALUES (");
        for c in columns {
            text.push_str(&format!(" ?{c}"));
        }
        text.push_str(" ) { } }");
        let query = SparqlParser::new()
            .parse_query(&text)
            .map_err(|e| ExpressionError(e.to_string()))?;
        let outputs: Vec<String> = expressions.iter().map(|(v, _)| v.clone()).collect();
        Ok(SelectExpressions {
            folds: folds(&query, &outputs, columns),
            query,
            outputs,
        })
    }

    /// Each output's fold, when every expression is one the engine folds itself.
    pub fn folds(&self) -> Option<&[Fold]> {
        self.folds.as_deref()
    }

    /// The outputs' values folded over `rows` rows, `cell(row, column)` giving a column's
    /// value in a row (None: unbound, or a blank node or triple term, which spareval's path
    /// leaves out too); None when the expressions are no folds or a value is one a fold
    /// leaves to spareval: then `evaluate` answers. Each output is None where SPARQL leaves
    /// it unbound (an error: a `SUM` over a string, an unbound value, an overflow).
    pub fn fold(
        &self,
        rows: usize,
        cell: impl Fn(usize, usize) -> Option<Value>,
    ) -> Option<Vec<Option<Value>>> {
        let folds = self.folds.as_ref()?;
        folds.iter().map(|f| f.over(rows, &cell)).collect()
    }

    /// The expressions' values over `rows` (one value per column, None: unbound), by output
    /// variable: None for one whose expression errs (SPARQL leaves it unbound). A blank node
    /// or a triple term in a row is left out of it (as the reference does).
    pub fn evaluate(
        &self,
        rows: &[Vec<Option<Term>>],
    ) -> Result<Vec<Option<Term>>, ExpressionError> {
        let mut query = self.query.clone();
        let table: Vec<Vec<Option<GroundTerm>>> = rows
            .iter()
            .map(|row| row.iter().map(|t| t.as_ref().and_then(ground)).collect())
            .collect();
        let Query::Select { pattern, .. } = &mut query else {
            return Err(ExpressionError("not a SELECT".into()));
        };
        if !fill(pattern, table) {
            return Err(ExpressionError("no VALUES table to fill".into()));
        }
        let dataset = Dataset::new();
        let results = QueryEvaluator::new()
            .prepare(&query)
            .execute(&dataset)
            .map_err(|e| ExpressionError(e.to_string()))?;
        let QueryResults::Solutions(mut solutions) = results else {
            return Err(ExpressionError("not a SELECT".into()));
        };
        let Some(solution) = solutions.next() else {
            return Ok(vec![None; self.outputs.len()]);
        };
        let solution = solution.map_err(|e| ExpressionError(e.to_string()))?;
        Ok(self
            .outputs
            .iter()
            .map(|v| solution.get(Variable::new_unchecked(v.as_str())).cloned())
            .collect())
    }
}

/// The folds of a parsed `SELECT (e AS ?v) ... WHERE { VALUES ... }` (an implicit group):
/// each output bound by an `Extend` to an aggregate of the group that is a fold.
fn folds(query: &Query, outputs: &[String], columns: &[String]) -> Option<Vec<Fold>> {
    let Query::Select { pattern, .. } = query else {
        return None;
    };
    let GraphPattern::Project { inner, .. } = pattern else {
        return None;
    };
    let mut node = &**inner;
    let mut bound = Vec::new();
    while let GraphPattern::Extend {
        inner,
        variable,
        expression,
    } = node
    {
        bound.push((variable, expression));
        node = inner;
    }
    let GraphPattern::Group {
        inner,
        variables,
        aggregates,
    } = node
    else {
        return None;
    };
    if !variables.is_empty() || !matches!(**inner, GraphPattern::Values { .. }) {
        return None;
    }
    let column = |v: &Variable| columns.iter().position(|c| c == v.as_str());
    outputs
        .iter()
        .map(|out| {
            let (_, Expression::Variable(aggregate)) =
                bound.iter().find(|(v, _)| v.as_str() == out)?
            else {
                return None;
            };
            let (_, expression) = aggregates.iter().find(|(v, _)| v == aggregate)?;
            Some(match expression {
                AggregateExpression::CountSolutions { distinct: false } => Fold::CountRows,
                AggregateExpression::FunctionCall {
                    name,
                    expr: Expression::Variable(v),
                    distinct: false,
                } => {
                    let c = column(v)?;
                    match name {
                        AggregateFunction::Count => Fold::Count(c),
                        AggregateFunction::Sum => Fold::Sum(c),
                        AggregateFunction::Avg => Fold::Avg(c),
                        AggregateFunction::Min => Fold::Min(c),
                        AggregateFunction::Max => Fold::Max(c),
                        _ => return None,
                    }
                }
                _ => return None,
            })
        })
        .collect()
}

impl Fold {
    /// The fold over `rows` rows as spareval's accumulators compute it (outer None: a value
    /// this fold leaves to spareval; inner None: SPARQL's error, the output left unbound).
    fn over(
        self,
        rows: usize,
        cell: &impl Fn(usize, usize) -> Option<Value>,
    ) -> Option<Option<Value>> {
        let count = |n: usize| Some(Value::Integer(Integer::from(i64::try_from(n).ok()?)));
        Some(match self {
            Fold::CountRows => count(rows),
            Fold::Count(c) => count((0..rows).filter(|&r| cell(r, c).is_some()).count()),
            Fold::Sum(c) => sum(rows, c, cell),
            Fold::Avg(c) => match sum(rows, c, cell) {
                None => None,
                Some(_) if rows == 0 => count(0),
                Some(total) => arithmetic(Arith::Div, &total, &count(rows)?),
            },
            Fold::Min(c) => return extreme(rows, c, cell, Ordering::Less),
            Fold::Max(c) => return extreme(rows, c, cell, Ordering::Greater),
        })
    }
}

/// `SUM`: from the integer 0, each value added with numeric promotion; an unbound or
/// non-numeric value, or an overflow, is an error.
fn sum(rows: usize, c: usize, cell: &impl Fn(usize, usize) -> Option<Value>) -> Option<Value> {
    let mut total = Value::Integer(Integer::default());
    for r in 0..rows {
        let value = cell(r, c)?;
        Number::of(&value)?;
        total = arithmetic(Arith::Add, &total, &value)?;
    }
    Some(total)
}

/// `MIN` (`keep` Less) or `MAX` (Greater) of integers and decimals, the first of equal
/// values kept; an unbound value is an error. Other values are left to spareval (ORDER BY's
/// order across kinds, a `NaN`): outer None.
fn extreme(
    rows: usize,
    c: usize,
    cell: &impl Fn(usize, usize) -> Option<Value>,
    keep: Ordering,
) -> Option<Option<Value>> {
    let mut best: Option<(Number, Value)> = None;
    for r in 0..rows {
        let Some(value) = cell(r, c) else {
            return Some(None); // an error, whatever comes after (spareval stops there too)
        };
        let number = match value {
            Value::Integer(_) | Value::Decimal(_) => Number::of(&value)?,
            _ => return None,
        };
        if best
            .as_ref()
            .is_none_or(|(b, _)| number.order(*b) == Some(keep))
        {
            best = Some((number, value));
        }
    }
    Some(best.map(|(_, v)| v))
}

/// The value of dictionary term `id` as a row's cell, as `ground` puts it in the VALUES
/// table: IRIs and literals (a blank node or a triple term is left out, None).
pub fn cell_value(
    id: spaseq_io::dictionary::TermId,
    dict: &spaseq_io::dictionary::Dictionary,
) -> Option<Value> {
    match dict.get(id) {
        Term::Literal(l) => Some(Value::of_literal(l)),
        Term::NamedNode(_) => Some(Value::Node(id)),
        _ => None,
    }
}

/// A term as a VALUES entry: IRIs and literals.
fn ground(term: &Term) -> Option<GroundTerm> {
    match term {
        Term::NamedNode(n) => Some(GroundTerm::NamedNode(n.clone())),
        Term::Literal(l) => Some(GroundTerm::Literal(l.clone())),
        _ => None,
    }
}

/// Put `table` as the bindings of the VALUES under `pattern`; whether there was one.
fn fill(pattern: &mut GraphPattern, table: Vec<Vec<Option<GroundTerm>>>) -> bool {
    match pattern {
        GraphPattern::Values { bindings, .. } => {
            *bindings = table;
            true
        }
        GraphPattern::Project { inner, .. }
        | GraphPattern::Extend { inner, .. }
        | GraphPattern::Group { inner, .. }
        | GraphPattern::Distinct { inner }
        | GraphPattern::Reduced { inner }
        | GraphPattern::Filter { inner, .. }
        | GraphPattern::OrderBy { inner, .. }
        | GraphPattern::Slice { inner, .. } => fill(inner, table),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::Literal;

    fn int(v: i64) -> Option<Term> {
        Some(Literal::from(v).into())
    }

    #[test]
    fn aggregates_are_sparql_s() {
        let columns = ["s".to_owned(), "t".to_owned()];
        let e = SelectExpressions::new(
            None,
            &Default::default(),
            &[
                ("avg".into(), "AVG(?t)".into()),
                ("n".into(), "COUNT(*)".into()),
                ("low".into(), "MIN(?t)".into()),
            ],
            &columns,
        )
        .unwrap();
        let s = Some(Term::from(oxrdf::NamedNode::new_unchecked(
            "http://ex.org/s",
        )));
        let rows = vec![
            vec![s.clone(), int(10)],
            vec![s.clone(), int(40)],
            vec![s, int(70)],
        ];
        let got = e.evaluate(&rows).unwrap();
        let decimal = |v: &str| {
            Some(Term::from(Literal::new_typed_literal(
                v,
                oxrdf::vocab::xsd::DECIMAL,
            )))
        };
        assert_eq!(got, vec![decimal("40"), int(3), int(10)]);
        // the same prepared expressions over other rows
        assert_eq!(e.evaluate(&[vec![None, int(1)]]).unwrap()[1], int(1));
    }

    /// The folds answer what spareval answers (`evaluate`), over rows drawn from numbers of
    /// every type (an overflow, a `NaN`, an ill-typed one), strings, an IRI, a duration, a
    /// blank node and unbound cells; and they do answer most of them.
    #[test]
    fn the_folds_answer_as_spareval() {
        use oxrdf::{BlankNode, NamedNode};
        use spaseq_io::dictionary::Dictionary;
        let xsd = |t: &str| NamedNode::new_unchecked(format!("{}{t}", spaseq_io::vocab::XSD));
        let typed = |v: &str, t: &str| Some(Term::from(Literal::new_typed_literal(v, xsd(t))));
        let pool: Vec<Option<Term>> = vec![
            int(1),
            int(-3),
            int(0),
            typed("01", "int"),
            typed("9223372036854775807", "integer"),
            typed("2.5", "decimal"),
            typed("-0.1", "decimal"),
            typed("1.0", "decimal"),
            typed("1.5", "float"),
            typed("NaN", "float"),
            typed("1e3", "double"),
            typed("INF", "double"),
            typed("abc", "integer"),
            typed("PT1S", "dayTimeDuration"),
            Some(Literal::new_simple_literal("x").into()),
            Some(Literal::new_language_tagged_literal_unchecked("x", "en").into()),
            Some(NamedNode::new_unchecked("http://ex.org/a").into()),
            Some(BlankNode::new_unchecked("b").into()),
            None,
        ];
        let columns = ["s".to_owned(), "t".to_owned()];
        let expressions: Vec<(String, String)> = [
            "COUNT(*)",
            "COUNT(?t)",
            "SUM(?t)",
            "AVG(?t)",
            "MIN(?t)",
            "MAX(?t)",
            "COUNT(?s)",
        ]
        .iter()
        .enumerate()
        .map(|(i, e)| (format!("o{i}"), (*e).to_owned()))
        .collect();
        let e = SelectExpressions::new(None, &Default::default(), &expressions, &columns).unwrap();
        assert!(e.folds().is_some());
        let dict = Dictionary::new();
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let (mut cases, mut folded) = (0, 0);
        for _ in 0..3000 {
            // numbers most of the time, so that the folds have work
            let draw = |k: usize| if k < 9 { k } else { k % pool.len() };
            let rows: Vec<Vec<Option<Term>>> = (0..next(5))
                .map(|_| {
                    let (a, b) = (next(pool.len() + 9), next(pool.len() + 9));
                    vec![pool[draw(a)].clone(), pool[draw(b)].clone()]
                })
                .collect();
            let ids: Vec<Vec<Option<u32>>> = rows
                .iter()
                .map(|row| {
                    row.iter()
                        .map(|t| t.clone().map(|t| dict.intern(t)))
                        .collect()
                })
                .collect();
            let want = e.evaluate(&rows).unwrap();
            let cell = |r: usize, c: usize| ids[r][c].and_then(|id| cell_value(id, &dict));
            let folds = e.folds().unwrap();
            for (i, fold) in folds.iter().enumerate() {
                cases += 1;
                let Some(got) = fold.over(rows.len(), &cell) else {
                    continue;
                };
                folded += 1;
                let got = got.map(|v| v.to_term(&dict));
                assert_eq!(got, want[i], "{} over {rows:?}", expressions[i].1);
            }
            if let Some(all) = e.fold(rows.len(), cell) {
                let all: Vec<Option<Term>> = all
                    .into_iter()
                    .map(|v| v.map(|v| v.to_term(&dict)))
                    .collect();
                assert_eq!(all, want, "over {rows:?}");
            }
        }
        assert!(folded * 10 > cases * 8, "{folded} of {cases} folded");
    }

    #[test]
    fn only_plain_aggregates_are_folds() {
        let columns = ["t".to_owned()];
        let folds = |e: &str| {
            SelectExpressions::new(
                None,
                &Default::default(),
                &[("v".into(), e.into())],
                &columns,
            )
            .unwrap()
            .folds()
            .map(<[Fold]>::to_vec)
        };
        assert_eq!(folds("AVG(?t)"), Some(vec![Fold::Avg(0)]));
        assert_eq!(folds("COUNT(*)"), Some(vec![Fold::CountRows]));
        for other in [
            "AVG(DISTINCT ?t)",
            "COUNT(DISTINCT *)",
            "AVG(?t) + 1",
            "SUM(?t * 2)",
            "SAMPLE(?t)",
            "GROUP_CONCAT(?t)",
            "MAX(?nowhere)",
            "?t",
        ] {
            assert_eq!(folds(other), None, "{other}");
        }
    }

    #[test]
    fn a_bad_expression_is_an_error() {
        let err = SelectExpressions::new(
            None,
            &Default::default(),
            &[("x".into(), "AVG(".into())],
            &[],
        );
        assert!(err.is_err());
    }
}
