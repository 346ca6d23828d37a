//! The direct parts of spargebra's graph patterns and expressions (sub-patterns, and the
//! expressions of FILTER, BIND, OPTIONAL, ORDER BY, aggregates, operators and EXISTS), listed
//! once for every walk over them: the SPARQL path's check of what spareval can answer and its
//! `sameTerm` rewrite (`sparql.rs`), one reading them and one rewriting them in place.

use spargebra::algebra::{AggregateExpression, Expression, GraphPattern, OrderExpression};

/// A part of a pattern or an expression.
pub enum Part<'a> {
    Pattern(&'a GraphPattern),
    Expression(&'a Expression),
}

/// A part of a pattern or an expression, to rewrite in place.
pub enum PartMut<'a> {
    Pattern(&'a mut GraphPattern),
    Expression(&'a mut Expression),
}

/// Both listings from one text: matched through `&` they give `Part`s, through `&mut`
/// `PartMut`s (Rust's binding modes make the same patterns bind either).
macro_rules! parts {
    ($pattern_parts:ident, $expression_parts:ident, $part:ident, $($m:tt)?) => {
        /// The direct parts of `p`, sub-patterns after the expressions they scope over
        /// (BGPs, paths and VALUES have none).
        pub fn $pattern_parts<'a>(p: &'a $($m)? GraphPattern) -> Vec<$part<'a>> {
            use $part::{Expression as E, Pattern as P};
            match p {
                GraphPattern::Join { left, right }
                | GraphPattern::Union { left, right }
                | GraphPattern::Minus { left, right } => vec![P(left), P(right)],
                GraphPattern::LeftJoin { left, right, expression } => {
                    let mut parts = vec![P(left), P(right)];
                    parts.extend(expression.into_iter().map(E));
                    parts
                }
                GraphPattern::Filter { expr, inner } => vec![E(expr), P(inner)],
                GraphPattern::Extend { inner, expression, .. } => vec![E(expression), P(inner)],
                GraphPattern::OrderBy { inner, expression } => {
                    let mut parts: Vec<$part<'a>> = expression
                        .into_iter()
                        .map(|o| match o {
                            OrderExpression::Asc(e) | OrderExpression::Desc(e) => E(e),
                        })
                        .collect();
                    parts.push(P(inner));
                    parts
                }
                GraphPattern::Group { inner, aggregates, .. } => {
                    let mut parts: Vec<$part<'a>> = aggregates
                        .into_iter()
                        .filter_map(|(_, aggregate)| match aggregate {
                            AggregateExpression::FunctionCall { expr, .. } => Some(E(expr)),
                            AggregateExpression::CountSolutions { .. } => None,
                        })
                        .collect();
                    parts.push(P(inner));
                    parts
                }
                GraphPattern::Graph { inner, .. }
                | GraphPattern::Project { inner, .. }
                | GraphPattern::Distinct { inner }
                | GraphPattern::Reduced { inner }
                | GraphPattern::Slice { inner, .. }
                | GraphPattern::Service { inner, .. } => vec![P(inner)],
                _ => Vec::new(),
            }
        }

        /// The direct parts of `e`: its operands, and the pattern of an EXISTS.
        pub fn $expression_parts<'a>(e: &'a $($m)? Expression) -> Vec<$part<'a>> {
            use $part::{Expression as E, Pattern as P};
            match e {
                Expression::Or(a, b)
                | Expression::And(a, b)
                | Expression::Equal(a, b)
                | Expression::SameTerm(a, b)
                | Expression::Greater(a, b)
                | Expression::GreaterOrEqual(a, b)
                | Expression::Less(a, b)
                | Expression::LessOrEqual(a, b)
                | Expression::Add(a, b)
                | Expression::Subtract(a, b)
                | Expression::Multiply(a, b)
                | Expression::Divide(a, b) => vec![E(a), E(b)],
                Expression::UnaryPlus(a) | Expression::UnaryMinus(a) | Expression::Not(a) => {
                    vec![E(a)]
                }
                Expression::In(a, list) => {
                    let mut parts = vec![E(a)];
                    parts.extend(list.into_iter().map(E));
                    parts
                }
                Expression::If(a, b, c) => vec![E(a), E(b), E(c)],
                Expression::Coalesce(list) | Expression::FunctionCall(_, list) => {
                    list.into_iter().map(E).collect()
                }
                Expression::Exists(p) => vec![P(p)],
                Expression::NamedNode(_)
                | Expression::Literal(_)
                | Expression::Variable(_)
                | Expression::Bound(_) => Vec::new(),
            }
        }
    };
}

parts!(pattern_parts, expression_parts, Part,);
parts!(pattern_parts_mut, expression_parts_mut, PartMut, mut);
