//! A SPARQL SELECT evaluated by this build of spareval on a graph of its own: what the
//! SPARQL path (`sparql.rs`) evaluates with, so a test can compare its features (calendar
//! values, SEP-0002, SEP-0006, SPARQL 1.2) with the pyoxigraph the semantics follows.

use oxrdf::{Dataset, GraphName, Quad, Triple};
use spareval::{QueryEvaluator, QueryResults};
use spargebra::SparqlParser;

/// Why a query could not be answered.
#[derive(Debug, PartialEq, Eq)]
pub enum SelectError {
    /// spargebra did not parse the query (its message).
    Syntax(String),
    /// The query is not a SELECT.
    NotSelect,
    /// spareval failed while evaluating it (its message).
    Evaluation(String),
}

impl std::fmt::Display for SelectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SelectError::Syntax(m) => write!(f, "syntax error: {m}"),
            SelectError::NotSelect => f.write_str("not a SELECT query"),
            SelectError::Evaluation(m) => write!(f, "evaluation error: {m}"),
        }
    }
}

/// The solutions of SELECT `query` over `triples` as the default graph: per solution, its
/// bound variables and their terms, in the order spareval gives them.
pub fn select(
    query: &str,
    triples: &[Triple],
) -> Result<Vec<Vec<(String, oxrdf::Term)>>, SelectError> {
    let parsed = SparqlParser::new()
        .parse_query(query)
        .map_err(|e| SelectError::Syntax(e.to_string()))?;
    let mut dataset = Dataset::new();
    for t in triples {
        dataset.insert(&Quad::new(
            t.subject.clone(),
            t.predicate.clone(),
            t.object.clone(),
            GraphName::DefaultGraph,
        ));
    }
    let results = QueryEvaluator::new()
        .prepare(&parsed)
        .execute(&dataset)
        .map_err(|e| SelectError::Evaluation(e.to_string()))?;
    let QueryResults::Solutions(solutions) = results else {
        return Err(SelectError::NotSelect);
    };
    solutions
        .map(|s| {
            s.map(|s| {
                s.iter()
                    .map(|(v, t)| (v.as_str().to_owned(), t.clone()))
                    .collect()
            })
            .map_err(|e| SelectError::Evaluation(e.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_values_compare() {
        let rows = select(
            "SELECT ?x WHERE { BIND(\"2023-01-01\"^^<http://www.w3.org/2001/XMLSchema#date> \
             < \"2023-06-01\"^^<http://www.w3.org/2001/XMLSchema#date> AS ?x) }",
            &[],
        )
        .unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(
            rows[0][0].1.to_string(),
            "\"true\"^^<http://www.w3.org/2001/XMLSchema#boolean>"
        );
    }

    #[test]
    fn errors_are_typed() {
        assert!(matches!(select("SELECT", &[]), Err(SelectError::Syntax(_))));
        assert_eq!(select("ASK {}", &[]), Err(SelectError::NotSelect));
    }
}
