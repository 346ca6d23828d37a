//! Comparisons (`<`, `>`, `<=`, `>=`, `=`, `!=`) of two variables, of a variable and a
//! numeric constant, or of either with a variable times a numeric constant (`?p2 <= ?p1 *
//! 0.98`), answered on the operands' numbers (`Number`, read from the event's cached values
//! without building, cloning or dropping a `Value`): the FILTER of every offer of an event to
//! a run. A product is taken on exact integers (`Scale`). When an operand is not a number, or
//! the product is not one the integers give, the answer is left to the general evaluator
//! (`value::compare`, `value::equals`, `functions::arithmetic`), which gives the same answers
//! on numbers: the tests below and in expr.rs check the two agree.

use super::expr::Env;
use super::value::Number;
use crate::vars::Slot;
use oxsdatatypes::{Decimal, Integer};
use std::cmp::Ordering;

/// What a comparison tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Test {
    /// `<`/`>` (the order wanted), with `=` too for `<=`/`>=`.
    Order(Ordering, bool),
    /// `=`, or `!=` when negated.
    Equal { negated: bool },
}

impl Test {
    #[inline]
    fn holds(self, a: Number, b: Number) -> Option<bool> {
        Some(match self {
            Test::Order(side, or_equal) => {
                let order = a.order(b)?;
                order == side || (or_equal && order == Ordering::Equal)
            }
            Test::Equal { negated } => a.equals(b) != negated,
        })
    }
}

/// One side of a comparison: a variable's value, a numeric constant, or a variable's value
/// times a numeric constant.
#[derive(Debug, Clone, Copy)]
pub enum Operand {
    Var(Slot),
    Const(Number),
    Scaled(Slot, Scale),
}

/// Multiplying by an `xsd:decimal` or `xsd:integer` constant `c = num / pow` (`pow` a power
/// of ten, `num` with no trailing zero when `pow > 1`) on exact integers: a decimal or an
/// integer `x` (its 18-digit fixed-point `raw`) times `c` is the decimal `raw * num / pow`
/// when `pow` divides `raw * num`, and an error otherwise (more than 18 fraction digits), as
/// `Decimal::checked_mul` decides; an integer times an integer constant is their integer
/// product. Other numbers and an overflow are the general arithmetic's (`Verdict::General`).
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    num: i128,
    pow: i128,
    /// `c` is an `xsd:integer` (then `pow` is 1)
    integer: bool,
}

impl Scale {
    /// The scale of a constant factor, if it is a decimal or an integer.
    pub fn of(c: Number) -> Option<Scale> {
        let (decimal, integer) = match c {
            Number::Decimal(d) => (d, false),
            Number::Integer(i) => (Decimal::from(i), true),
            Number::Float(_) | Number::Double(_) => return None,
        };
        let (mut num, mut pow) = (raw(decimal), 10_i128.pow(18));
        while pow > 1 && num % 10 == 0 {
            num /= 10;
            pow /= 10;
        }
        Some(Scale { num, pow, integer })
    }

    /// `x * c`: Err(Verdict::Error) when the product is an error, Err(Verdict::General)
    /// when it is the general arithmetic's to say (a float or a double, an overflow).
    #[inline]
    pub fn times(self, x: Number) -> Result<Number, Verdict> {
        let raw = match x {
            Number::Integer(i) if self.integer => {
                // pow is 1: num is the constant itself, an i64
                let product = i.checked_mul(Integer::from(self.num as i64));
                return product.map(Number::Integer).ok_or(Verdict::General);
            }
            Number::Integer(i) => raw(Decimal::from(i)),
            Number::Decimal(d) => raw(d),
            Number::Float(_) | Number::Double(_) => return Err(Verdict::General),
        };
        // the exact product may still fit when this overflows
        let product = raw.checked_mul(self.num).ok_or(Verdict::General)?;
        let quotient = if self.pow == 1 {
            product
        } else {
            let quotient = product / self.pow;
            if quotient * self.pow != product {
                return Err(Verdict::Error); // more than 18 fraction digits
            }
            quotient
        };
        Ok(Number::Decimal(Decimal::from_be_bytes(
            quotient.to_be_bytes(),
        )))
    }
}

/// A decimal's 18-digit fixed-point integer.
#[inline]
fn raw(d: Decimal) -> i128 {
    i128::from_be_bytes(d.to_be_bytes())
}

/// The answer of a comparison on numbers, when it has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// True or false, as the general evaluator would say.
    Holds(bool),
    /// An error (an unbound variable, an unordered pair, an inexact product): the FILTER is
    /// false.
    Error,
    /// An operand is not a number, or a product not one `Scale` gives: ask the general
    /// evaluator.
    General,
}

/// A comparison of two operands, at least one a variable.
#[derive(Debug, Clone, Copy)]
pub struct NumericTest {
    test: Test,
    operands: [Operand; 2],
}

impl NumericTest {
    pub fn new(test: Test, operands: [Operand; 2]) -> Self {
        NumericTest { test, operands }
    }

    /// The comparison's answer on the row's numbers.
    pub fn verdict(&self, env: &Env<'_>) -> Verdict {
        match (number(self.operands[0], env), number(self.operands[1], env)) {
            (Ok(a), Ok(b)) => self.test.holds(a, b).map_or(Verdict::Error, Verdict::Holds),
            (Err(verdict), _) | (_, Err(verdict)) => verdict,
        }
    }
}

/// An operand's number; Err: the verdict without it (an unbound variable or an inexact
/// product is an error, a term that is not a number is the general evaluator's).
#[inline]
fn number(operand: Operand, env: &Env<'_>) -> Result<Number, Verdict> {
    match operand {
        Operand::Const(n) => Ok(n),
        Operand::Var(slot) => match env.term(slot) {
            Some(id) => env.index.number(id, env.dict).ok_or(Verdict::General),
            None => Err(Verdict::Error),
        },
        Operand::Scaled(slot, scale) => scale.times(number(Operand::Var(slot), env)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event_index::{EventIndex, ValueCache};
    use crate::expr::Compiled;
    use crate::value::Value;
    use crate::vars::VarTable;
    use oxrdf::{Literal, NamedNode, Term};
    use spaseq_io::dictionary::{Dictionary, TermId};
    use spaseq_io::vocab::XSD;
    use spaseq_plan::algebra::{Expr, Term as PlanTerm};
    use std::rc::Rc;

    fn typed(dict: &Dictionary, value: &str, datatype: &str) -> TermId {
        let datatype = NamedNode::new_unchecked(format!("{XSD}{datatype}"));
        dict.intern(Literal::new_typed_literal(value, datatype).into())
    }

    /// Terms of every kind a comparison may meet: integers, decimals (big ones too),
    /// floats and doubles with NaN, infinities and signed zeros, ill-typed numbers,
    /// strings, language strings, booleans, dates, IRIs.
    fn terms(dict: &Dictionary) -> Vec<TermId> {
        let mut ids = Vec::new();
        for v in [
            "0",
            "1",
            "-1",
            "01",
            "2",
            "42",
            "9223372036854775807",
            "-9223372036854775808",
        ] {
            ids.push(typed(dict, v, "integer"));
        }
        ids.push(typed(dict, "7", "int"));
        for v in [
            "0.0",
            "-0.0",
            "1.0",
            "1.5",
            "124.92",
            "124.920",
            "124.9200000000000001",
            "-3.25",
            "42",
            "9223372036854775807.000000000000000001",
            "170141183460469231731.687303715884105727",
            "-170141183460469231731.687303715884105728",
            "0.000000000000000001",
        ] {
            ids.push(typed(dict, v, "decimal"));
        }
        for dt in ["float", "double"] {
            for v in [
                "0",
                "-0",
                "1",
                "1.5",
                "124.92",
                "NaN",
                "INF",
                "-INF",
                "1e30",
                "16777217",
                "9.223372036854776E18",
            ] {
                ids.push(typed(dict, v, dt));
            }
        }
        ids.push(typed(dict, "abc", "integer"));
        ids.push(typed(dict, "1.5.", "decimal"));
        ids.push(typed(dict, "true", "boolean"));
        ids.push(typed(dict, "false", "boolean"));
        ids.push(typed(dict, "2026-11-27", "date"));
        ids.push(typed(dict, "1", "string"));
        ids.push(dict.intern(Literal::new_simple_literal("1").into()));
        ids.push(dict.intern(Literal::new_simple_literal("abc").into()));
        ids.push(dict.intern(Literal::new_language_tagged_literal_unchecked("1", "en").into()));
        ids.push(dict.intern(Term::from(NamedNode::new_unchecked("http://ex.org/a"))));
        let unknown = NamedNode::new_unchecked("http://ex.org/type");
        ids.push(dict.intern(Literal::new_typed_literal("1", unknown).into()));
        ids
    }

    fn var(name: &str) -> Expr {
        Expr::Var(name.into())
    }

    fn call(op: &str, args: Vec<Expr>) -> Expr {
        Expr::Call {
            op: op.into(),
            args,
            distinct: false,
        }
    }

    /// The term as a constant of an expression.
    fn constant(term: &Term) -> Expr {
        Expr::Term(match term {
            Term::NamedNode(n) => PlanTerm::Iri(n.as_str().into()),
            Term::Literal(lit) => PlanTerm::Literal {
                value: lit.value().into(),
                datatype: lit.datatype().as_str().into(),
                language: lit.language().map(Into::into),
            },
            other => unreachable!("{other}"),
        })
    }

    /// Every comparison operator, on every pair of the terms (bound or not, as constants,
    /// read from the event's cached values, from a run's or parsed on each use), gives what
    /// the general evaluator gives on the same operands (`COALESCE(?a)` keeps the compiler
    /// from the numeric test: it is `?a`, an error when unbound).
    #[test]
    fn the_numeric_comparison_agrees_with_the_general_evaluator() {
        let dict = Dictionary::new();
        let ids = terms(&dict);
        let mut vars = VarTable::default();
        let (a, b) = (vars.slot("a"), vars.slot("b"));
        let (mut fast_answers, mut general_answers, mut checked) = (0, 0, 0);
        let cache = Rc::new(ValueCache::default());
        for op in ["<", ">", "<=", ">=", "=", "!="] {
            // (left, right, compiled to the numeric test, reads ?b)
            let mut pairs = vec![
                (var("a"), var("b"), true, true),
                (var("b"), var("a"), true, true),
            ];
            for &id in &ids {
                let numeric = Number::of(&Value::of_term(id, &dict)).is_some();
                let c = constant(dict.get(id));
                pairs.push((var("a"), c.clone(), numeric, false));
                pairs.push((c, var("a"), numeric, false));
            }
            for (left, right, numeric, reads_b) in pairs {
                let fast = call(op, vec![left.clone(), right.clone()]);
                let fast = Compiled::new(&fast, &mut vars, &dict, None).unwrap();
                let general = call(
                    op,
                    vec![call("COALESCE", vec![left]), call("COALESCE", vec![right])],
                );
                let general = Compiled::new(&general, &mut vars, &dict, None).unwrap();
                assert_eq!(fast.numeric_test().is_some(), numeric, "{op}");
                assert!(general.numeric_test().is_none());
                let bindings = ids.iter().copied().map(Some).chain([None]);
                for x in bindings.clone() {
                    let ys = if reads_b {
                        bindings.clone().collect()
                    } else {
                        vec![None]
                    };
                    for y in ys {
                        let mut row = vec![None; vars.len()];
                        row[a] = x;
                        row[b] = y;
                        // ?a is the event's object; ?b a run's value (cached, or not)
                        let event: Vec<[TermId; 3]> = x.iter().map(|&o| [o, o, o]).collect();
                        let cached = EventIndex::with_values(&event, cache.clone());
                        for index in [cached, EventIndex::new(&event)] {
                            let env = Env {
                                row: &row,
                                dict: &dict,
                                index: &index,
                                run: None,
                            };
                            assert_eq!(
                                format!("{:?} {:?}", fast.ebv(&env), fast.value(&env)),
                                format!("{:?} {:?}", general.ebv(&env), general.value(&env)),
                                "{op} with ?a = {:?}, ?b = {:?}",
                                x.map(|i| dict.get(i)),
                                y.map(|i| dict.get(i))
                            );
                            match fast.numeric_test().map(|t| t.verdict(&env)) {
                                Some(Verdict::General) => general_answers += 1,
                                Some(_) => fast_answers += 1,
                                None => {}
                            }
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(
            fast_answers > checked / 2 && general_answers > checked / 10,
            "{fast_answers} fast, {general_answers} general of {checked}"
        );
    }
}
