//! A SELECT's `(expression AS ?v)` over the rows a match's COLLECT timers gathered
//! (docs/decisions.md 71): the rows are one group, and spareval evaluates the expressions as
//! SPARQL 1.1 evaluates a SELECT's expressions over an implicit group, so `AVG`, `COUNT`,
//! `SUM`, `MIN`, `MAX`, `SAMPLE` and `GROUP_CONCAT` mean what they mean in SPARQL (the
//! reference evaluator asks pyoxigraph the same question, `gpm_eval/aggregates.py`).
//!
//! The query is parsed once, over an empty `VALUES` table of the rows' columns; each match
//! fills that table with its rows.

use oxrdf::{Dataset, Term, Variable};
use spareval::{QueryEvaluator, QueryResults};
use spargebra::algebra::GraphPattern;
use spargebra::term::GroundTerm;
use spargebra::{Query, SparqlParser};

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
        Ok(SelectExpressions {
            query,
            outputs: expressions.iter().map(|(v, _)| v.clone()).collect(),
        })
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
