//! FILTER expressions compiled to a small tree over variable slots: constants are parsed
//! (IRIs interned) and REGEX patterns built once, at compile time; evaluation reads the
//! row's term ids and the event's cached literal values. Each compiled expression knows
//! the slots it reads, so a caller can tell the sub-expressions that depend only on the
//! context (bound before the event) from those reading the event's own variables.

use super::compare::{NumericTest, Operand, Scale, Test, Verdict};
use super::error::{unsupported, CompileError};
use super::event_index::EventIndex;
use super::functions::{self as f, Arith, Cast, Rounding, StrTest};
use super::run_functions::{self as run_fn, RunEnv, RunFn};
use super::value::{self, Number, Value};
use crate::vars::{Slot, VarTable};
use regex::Regex;
use spaseq_io::dictionary::{Dictionary, TermId};
use spaseq_plan::algebra::{Expr, Term};
use std::cmp::Ordering;
use std::sync::Arc;

/// What an expression is evaluated against: the solution, the terms, the event.
#[derive(Clone, Copy)]
pub struct Env<'a> {
    pub row: &'a [Option<TermId>],
    pub dict: &'a Dictionary,
    pub index: &'a EventIndex,
    /// The run being extended, for the `spaseq:` run functions (None: they are errors).
    pub run: Option<&'a RunEnv<'a>>,
}

impl Env<'_> {
    /// The term bound to `slot` (None: unbound).
    #[inline]
    pub(crate) fn term(&self, slot: Slot) -> Option<TermId> {
        self.row.get(slot).copied().flatten()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unary {
    Str,
    Lang,
    Datatype,
    Iri,
    IsIri,
    IsBlank,
    IsLiteral,
    IsNumeric,
    Strlen,
    Upper,
    Lower,
    Round(Rounding),
    Cast(Cast),
    Sign(bool),
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Binary {
    Eq,
    Ne,
    Cmp(Ordering, bool),
    Arith(Arith),
    SameTerm,
    StrTest(StrTest),
    LangMatches,
}

/// One node of a compiled expression.
#[derive(Debug, Clone)]
pub enum Node {
    Const(Value),
    Var(Slot),
    Bound(Slot),
    Unary(UnaryOp, Box<Node>),
    Binary(BinaryOp, Box<[Node; 2]>),
    And(Box<[Node; 2]>),
    Or(Box<[Node; 2]>),
    /// `lhs IN (items)`, negated for NOT IN
    In {
        negated: bool,
        lhs: Box<Node>,
        items: Vec<Node>,
    },
    If(Box<[Node; 3]>),
    Coalesce(Vec<Node>),
    Concat(Vec<Node>),
    Substr(Vec<Node>),
    /// None: the pattern or flags are invalid, every call is an error
    Regex(Option<Arc<Regex>>, Box<Node>),
    /// A `spaseq:` run function (reads `Env::run`)
    Run(RunFn),
    /// `operand * c` for an `xsd:decimal` or `xsd:integer` constant `c` (`ScaledProduct`):
    /// one multiplication and one division of integers instead of the decimal product's
    /// cancellation loop.
    ScaledMul(Box<Node>, ScaledProduct),
    /// A comparison of two variables, of a variable and a numeric constant, or of either
    /// with a variable times a decimal or integer constant: answered on the operands'
    /// numbers (`compare`), by `op` on `pair` when one is not a number.
    Compare(Box<Comparison>),
}

/// A comparison the numeric test answers where it can (`Node::Compare`).
#[derive(Debug, Clone)]
pub struct Comparison {
    numeric: NumericTest,
    op: BinaryOp,
    pair: [Node; 2],
}

impl Comparison {
    /// `op` on `pair` as a `Node::Compare` when the operands allow it (each a variable, a
    /// numeric constant or a variable times a decimal or integer constant, not both
    /// constants), else as a plain `Node::Binary`.
    fn of(op: Binary, pair: [Node; 2]) -> Node {
        let test = match op {
            Binary::Cmp(side, or_equal) => Test::Order(side, or_equal),
            Binary::Eq => Test::Equal { negated: false },
            Binary::Ne => Test::Equal { negated: true },
            _ => return Node::Binary(BinaryOp(op), Box::new(pair)),
        };
        let operand = |node: &Node| match node {
            Node::Var(slot) => Some(Operand::Var(*slot)),
            Node::Const(value) => Number::of(value).map(Operand::Const),
            Node::ScaledMul(x, by) => match **x {
                Node::Var(slot) => Some(Operand::Scaled(slot, by.scale)),
                _ => None,
            },
            _ => None,
        };
        match (operand(&pair[0]), operand(&pair[1])) {
            (Some(Operand::Const(_)), Some(Operand::Const(_))) | (None, _) | (_, None) => {
                Node::Binary(BinaryOp(op), Box::new(pair))
            }
            (Some(a), Some(b)) => Node::Compare(Box::new(Comparison {
                numeric: NumericTest::new(test, [a, b]),
                op: BinaryOp(op),
                pair,
            })),
        }
    }

    /// The comparison's effective boolean value; None for an error.
    fn ebv(&self, env: &Env<'_>) -> Option<bool> {
        match self.numeric.verdict(env) {
            Verdict::Holds(b) => Some(b),
            Verdict::Error => None,
            Verdict::General => {
                let a = self.pair[0].eval(env)?;
                let b = self.pair[1].eval(env)?;
                binary(self.op.0, &a, &b, env.dict)?.ebv()
            }
        }
    }
}

/// Multiplying by an `xsd:decimal` or `xsd:integer` constant on exact integers (`Scale`);
/// anything else (other types, an intermediate overflow) is left to `functions::arithmetic`
/// with `constant`.
#[derive(Debug, Clone)]
pub struct ScaledProduct {
    constant: Value,
    scale: Scale,
}

impl ScaledProduct {
    /// The product by `constant`, if it is a decimal or an integer.
    fn of(constant: &Value) -> Option<ScaledProduct> {
        let scale = Scale::of(Number::of(constant)?)?;
        Some(ScaledProduct {
            constant: constant.clone(),
            scale,
        })
    }

    fn times(&self, x: &Value) -> Option<Value> {
        match Number::of(x).map(|n| self.scale.times(n)) {
            Some(Ok(product)) => Some(product.into()),
            Some(Err(Verdict::Error)) => None,
            _ => f::arithmetic(Arith::Mul, x, &self.constant),
        }
    }
}

/// A unary operator or function (opaque outside this module).
#[derive(Debug, Clone, Copy)]
pub struct UnaryOp(Unary);

/// A binary operator or function (opaque outside this module).
#[derive(Debug, Clone, Copy)]
pub struct BinaryOp(Binary);

/// A compiled expression and the slots it reads.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub root: Node,
    pub slots: Vec<Slot>,
    /// It calls a run function: its value depends on the run, not only on the row.
    pub reads_run: bool,
}

impl Compiled {
    /// Compile an expression of the native subset; Err names what is outside it.
    pub fn new(
        expr: &Expr,
        vars: &mut VarTable,
        dict: &Dictionary,
        base_iri: Option<&str>,
    ) -> Result<Self, CompileError> {
        let mut compiler = Compiler {
            vars,
            dict,
            base_iri,
            slots: Vec::new(),
            reads_run: false,
        };
        let root = compiler.node(expr)?;
        Ok(Compiled {
            root,
            slots: compiler.slots,
            reads_run: compiler.reads_run,
        })
    }

    /// Compile an expression given as its plan JSON (`{"@type": "ECall", ...}`).
    pub fn from_json(
        text: &str,
        vars: &mut VarTable,
        dict: &Dictionary,
        base_iri: Option<&str>,
    ) -> Result<Self, CompileError> {
        let expr = Expr::from_json(text).map_err(CompileError::Plan)?;
        Self::new(&expr, vars, dict, base_iri)
    }

    /// The value; None for an error.
    pub fn value(&self, env: &Env<'_>) -> Option<Value> {
        self.root.eval(env)
    }

    /// The FILTER's verdict: its effective boolean value, None for an error (false).
    pub fn ebv(&self, env: &Env<'_>) -> Option<bool> {
        self.root.ebv(env)
    }

    /// The numeric test of a comparison compiled to one (for tests).
    #[cfg(test)]
    pub(crate) fn numeric_test(&self) -> Option<&NumericTest> {
        match &self.root {
            Node::Compare(comparison) => Some(&comparison.numeric),
            _ => None,
        }
    }

    /// FILTER semantics: errors are false.
    pub fn holds(&self, env: &Env<'_>) -> bool {
        self.root.ebv(env) == Some(true)
    }
}

struct Compiler<'a> {
    vars: &'a mut VarTable,
    dict: &'a Dictionary,
    base_iri: Option<&'a str>,
    slots: Vec<Slot>,
    reads_run: bool,
}

impl Compiler<'_> {
    fn slot(&mut self, name: &str) -> Slot {
        let slot = self.vars.slot(name);
        if !self.slots.contains(&slot) {
            self.slots.push(slot);
        }
        slot
    }

    fn node(&mut self, expr: &Expr) -> Result<Node, CompileError> {
        match expr {
            Expr::Var(name) => Ok(Node::Var(self.slot(name))),
            Expr::Term(term) => self.constant(term).map(Node::Const),
            Expr::Exists { .. } => Err(unsupported("EXISTS")),
            Expr::Call { distinct: true, .. } => Err(unsupported("DISTINCT in a call")),
            Expr::Call { op, args, .. } => self.call(op, args),
        }
    }

    fn constant(&mut self, term: &Term) -> Result<Value, CompileError> {
        match super::to_oxrdf(term)? {
            oxrdf::Term::Literal(lit) => Ok(Value::of_literal(&lit)),
            iri @ oxrdf::Term::NamedNode(_) => Ok(Value::Node(self.dict.intern(iri))),
            _ => Err(unsupported("a blank node constant in an expression")),
        }
    }

    fn args<const N: usize>(&mut self, op: &str, args: &[Expr]) -> Result<[Node; N], CompileError> {
        if args.len() != N {
            return Err(unsupported(format!("{op} with {} arguments", args.len())));
        }
        let nodes = args
            .iter()
            .map(|a| self.node(a))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(nodes.try_into().unwrap_or_else(|_| unreachable!()))
    }

    fn list(&mut self, args: &[Expr]) -> Result<Vec<Node>, CompileError> {
        args.iter().map(|a| self.node(a)).collect()
    }

    fn call(&mut self, op: &str, args: &[Expr]) -> Result<Node, CompileError> {
        if let Some(call) = run_fn::compile(op, args, &mut |name| self.vars.slot(name)) {
            self.reads_run = true;
            return call.map(Node::Run);
        }
        let unary = |me: &mut Self, u: Unary| -> Result<Node, CompileError> {
            let [a] = me.args::<1>(op, args)?;
            Ok(Node::Unary(UnaryOp(u), Box::new(a)))
        };
        let binary = |me: &mut Self, b: Binary| -> Result<Node, CompileError> {
            let pair = me.args::<2>(op, args)?;
            Ok(Node::Binary(BinaryOp(b), Box::new(pair)))
        };
        let comparison = |me: &mut Self, b: Binary| -> Result<Node, CompileError> {
            Ok(Comparison::of(b, me.args::<2>(op, args)?))
        };
        match op {
            "&&" => Ok(Node::And(Box::new(self.args::<2>(op, args)?))),
            "||" => Ok(Node::Or(Box::new(self.args::<2>(op, args)?))),
            "!" => unary(self, Unary::Not),
            "neg" => unary(self, Unary::Sign(true)),
            "pos" => unary(self, Unary::Sign(false)),
            "=" => comparison(self, Binary::Eq),
            "!=" => comparison(self, Binary::Ne),
            "<" => comparison(self, Binary::Cmp(Ordering::Less, false)),
            ">" => comparison(self, Binary::Cmp(Ordering::Greater, false)),
            "<=" => comparison(self, Binary::Cmp(Ordering::Less, true)),
            ">=" => comparison(self, Binary::Cmp(Ordering::Greater, true)),
            "+" => binary(self, Binary::Arith(Arith::Add)),
            "-" => binary(self, Binary::Arith(Arith::Sub)),
            "*" => {
                let [a, b] = self.args::<2>(op, args)?;
                let by = match (&a, &b) {
                    (Node::Const(_), Node::Const(_)) => None,
                    (Node::Const(c), _) | (_, Node::Const(c)) => ScaledProduct::of(c),
                    _ => None,
                };
                Ok(match by {
                    Some(by) => {
                        let x = if matches!(a, Node::Const(_)) { b } else { a };
                        Node::ScaledMul(Box::new(x), by)
                    }
                    None => Node::Binary(BinaryOp(Binary::Arith(Arith::Mul)), Box::new([a, b])),
                })
            }
            "/" => binary(self, Binary::Arith(Arith::Div)),
            "IN" | "NOT IN" => {
                let Some((lhs, items)) = args.split_first() else {
                    return Err(unsupported(format!("{op} without a left operand")));
                };
                Ok(Node::In {
                    negated: op == "NOT IN",
                    lhs: Box::new(self.node(lhs)?),
                    items: self.list(items)?,
                })
            }
            "BOUND" => match args {
                [Expr::Var(name)] => Ok(Node::Bound(self.slot(name))),
                _ => Err(unsupported("BOUND needs one variable")),
            },
            "IF" => Ok(Node::If(Box::new(self.args::<3>(op, args)?))),
            "COALESCE" => Ok(Node::Coalesce(self.list(args)?)),
            "CONCAT" => Ok(Node::Concat(self.list(args)?)),
            "SUBSTR" if (2..=3).contains(&args.len()) => Ok(Node::Substr(self.list(args)?)),
            "REGEX" => self.regex(args),
            "STR" => unary(self, Unary::Str),
            "LANG" => unary(self, Unary::Lang),
            "DATATYPE" => unary(self, Unary::Datatype),
            "IRI" | "URI" if self.base_iri.is_none() => unary(self, Unary::Iri),
            "ISIRI" | "ISURI" => unary(self, Unary::IsIri),
            "ISBLANK" => unary(self, Unary::IsBlank),
            "ISLITERAL" => unary(self, Unary::IsLiteral),
            "ISNUMERIC" => unary(self, Unary::IsNumeric),
            "STRLEN" => unary(self, Unary::Strlen),
            "UCASE" => unary(self, Unary::Upper),
            "LCASE" => unary(self, Unary::Lower),
            "ABS" => unary(self, Unary::Round(Rounding::Abs)),
            "CEIL" => unary(self, Unary::Round(Rounding::Ceil)),
            "FLOOR" => unary(self, Unary::Round(Rounding::Floor)),
            "ROUND" => unary(self, Unary::Round(Rounding::Round)),
            "SAMETERM" => binary(self, Binary::SameTerm),
            "CONTAINS" => binary(self, Binary::StrTest(StrTest::Contains)),
            "STRSTARTS" => binary(self, Binary::StrTest(StrTest::Starts)),
            "STRENDS" => binary(self, Binary::StrTest(StrTest::Ends)),
            "LANGMATCHES" => binary(self, Binary::LangMatches),
            _ => match op
                .strip_prefix('<')
                .and_then(|o| o.strip_suffix('>'))
                .and_then(Cast::of_iri)
            {
                Some(cast) => unary(self, Unary::Cast(cast)),
                None => Err(unsupported(format!("function {op}"))),
            },
        }
    }

    /// REGEX(text, pattern[, flags]) with constant simple-literal pattern and flags.
    fn regex(&mut self, args: &[Expr]) -> Result<Node, CompileError> {
        if !(2..=3).contains(&args.len()) {
            return Err(unsupported(format!("REGEX with {} arguments", args.len())));
        }
        let mut texts = Vec::new();
        for arg in &args[1..] {
            match arg {
                Expr::Term(term) => texts.push(match self.constant(term)? {
                    Value::Str(s) => Some(s),
                    _ => None,
                }),
                _ => return Err(unsupported("REGEX with a non-constant pattern or flags")),
            }
        }
        let text = self.node(&args[0])?;
        let regex = match texts.as_slice() {
            [Some(pattern)] => f::compile_regex(pattern, ""),
            [Some(pattern), Some(flags)] => f::compile_regex(pattern, flags),
            _ => None,
        };
        Ok(Node::Regex(regex.map(Arc::new), Box::new(text)))
    }
}

impl Node {
    /// The effective boolean value; None for an error.
    pub fn ebv(&self, env: &Env<'_>) -> Option<bool> {
        match self {
            Node::Bound(slot) => Some(env.term(*slot).is_some()),
            Node::And(pair) => logical(false, pair, env),
            Node::Or(pair) => logical(true, pair, env),
            Node::Unary(UnaryOp(Unary::Not), a) => a.ebv(env).map(|b| !b),
            Node::Compare(comparison) => comparison.ebv(env),
            _ => self.eval(env)?.ebv(),
        }
    }

    /// The value; None for an error.
    pub fn eval(&self, env: &Env<'_>) -> Option<Value> {
        match self {
            Node::Const(v) => Some(v.clone()),
            Node::Var(slot) => Some(env.index.value(env.term(*slot)?, env.dict)),
            Node::Bound(_) | Node::And(_) | Node::Or(_) | Node::Compare(_) => {
                self.ebv(env).map(Value::Boolean)
            }
            Node::Unary(UnaryOp(op), a) => {
                if *op == Unary::Not {
                    return self.ebv(env).map(Value::Boolean);
                }
                unary(*op, &a.eval(env)?, env.dict)
            }
            Node::Binary(BinaryOp(op), pair) => {
                let a = pair[0].eval(env)?;
                let b = pair[1].eval(env)?;
                binary(*op, &a, &b, env.dict)
            }
            Node::In {
                negated,
                lhs,
                items,
            } => in_list(lhs, items, env).map(|found| Value::Boolean(found != *negated)),
            Node::If(abc) => {
                if abc[0].ebv(env)? {
                    abc[1].eval(env)
                } else {
                    abc[2].eval(env)
                }
            }
            Node::Coalesce(items) => items.iter().find_map(|e| e.eval(env)),
            Node::Concat(items) => {
                let values = items
                    .iter()
                    .map(|e| e.eval(env))
                    .collect::<Option<Vec<_>>>()?;
                f::concat(&values)
            }
            Node::Substr(items) => {
                let values = items
                    .iter()
                    .map(|e| e.eval(env))
                    .collect::<Option<Vec<_>>>()?;
                f::substr(&values[0], &values[1], values.get(2))
            }
            Node::Regex(regex, text) => {
                let regex = regex.as_ref()?;
                f::regex_match(regex, &text.eval(env)?)
            }
            Node::Run(call) => call.eval(env.run, env.dict),
            Node::ScaledMul(x, by) => by.times(&x.eval(env)?),
        }
    }
}

/// SPARQL's three-valued `||` (`or`) and `&&`: an error only matters if no operand decides.
fn logical(or: bool, pair: &[Node; 2], env: &Env<'_>) -> Option<bool> {
    let left = pair[0].ebv(env);
    if left == Some(or) {
        return Some(or);
    }
    let right = pair[1].ebv(env);
    if right == Some(or) {
        return Some(or);
    }
    left?;
    right?;
    Some(!or)
}

/// `lhs IN (items)` as pyoxigraph rewrites it: `IN ()` is `IF(lhs, false, false)`, one item
/// is `lhs = item`, more are the `||` of the equalities (an error only if none holds).
fn in_list(lhs: &Node, items: &[Node], env: &Env<'_>) -> Option<bool> {
    if items.is_empty() {
        lhs.ebv(env)?;
        return Some(false);
    }
    let mut error = false;
    let left = lhs.eval(env);
    for item in items {
        let found = match (&left, item.eval(env)) {
            (Some(a), Some(b)) => value::equals(a, &b, env.dict),
            _ => None,
        };
        match found {
            Some(true) => return Some(true),
            Some(false) => {}
            None => error = true,
        }
    }
    if error {
        None
    } else {
        Some(false)
    }
}

fn unary(op: Unary, a: &Value, dict: &Dictionary) -> Option<Value> {
    Some(match op {
        Unary::Str => return f::str(a, dict),
        Unary::Lang => return f::lang(a),
        Unary::Datatype => return f::datatype(a),
        Unary::Iri => return f::iri(a, dict),
        Unary::IsIri => Value::Boolean(match a {
            Value::Iri(_) => true,
            Value::Node(id) => matches!(dict.get(*id), oxrdf::Term::NamedNode(_)),
            _ => false,
        }),
        Unary::IsBlank => Value::Boolean(
            matches!(a, Value::Node(id) if matches!(dict.get(*id), oxrdf::Term::BlankNode(_))),
        ),
        Unary::IsLiteral => Value::Boolean(a.is_literal()),
        Unary::IsNumeric => Value::Boolean(a.is_numeric()),
        Unary::Strlen => return f::strlen(a),
        Unary::Upper => return f::change_case(true, a),
        Unary::Lower => return f::change_case(false, a),
        Unary::Round(r) => return f::rounding(r, a),
        Unary::Cast(c) => return f::cast(c, a, dict),
        Unary::Sign(negate) => return f::sign(negate, a),
        Unary::Not => Value::Boolean(!a.ebv()?),
    })
}

fn binary(op: Binary, a: &Value, b: &Value, dict: &Dictionary) -> Option<Value> {
    Some(match op {
        Binary::Eq => Value::Boolean(value::equals(a, b, dict)?),
        Binary::Ne => Value::Boolean(!value::equals(a, b, dict)?),
        Binary::Cmp(side, or_equal) => {
            let order = value::compare(a, b, dict)?;
            Value::Boolean(order == side || (or_equal && order == Ordering::Equal))
        }
        Binary::Arith(op) => return f::arithmetic(op, a, b),
        Binary::SameTerm => Value::Boolean(value::identical(a, b, dict)),
        Binary::StrTest(test) => return f::string_test(test, a, b),
        Binary::LangMatches => return f::langmatches(a, b),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxsdatatypes::{Decimal, Integer};

    /// A reproducible stream of pseudo-random numbers (xorshift64) from `seed`.
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// The scaled product is the decimal (or integer) product (`functions::arithmetic`),
    /// value for value and error for error, over decimals with few and many fraction digits,
    /// integers, zero, negative factors, decimal and integer constants and products that
    /// overflow the intermediate or the result.
    #[test]
    fn the_scaled_product_is_the_decimal_product() {
        let decimal = |raw: i128| Decimal::from_be_bytes(raw.to_be_bytes());
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let p18 = 10_i128.pow(18);
        let mut factors = vec![
            decimal(98 * p18 / 100),
            decimal(975 * p18 / 1000),
            decimal(0),
            decimal(-3 * p18 / 2),
            decimal(1),
            decimal(123_456_789),
            decimal(i128::MAX / 7),
        ];
        let mut xs = vec![
            Value::Decimal(decimal(0)),
            Value::Decimal(decimal(i128::MAX)),
            Value::Decimal(decimal(i128::MIN + 1)),
            Value::Integer(Integer::from(i64::MAX)),
            Value::Integer(Integer::from(-7)),
            Value::Double(2.5.into()),
        ];
        for _ in 0..2000 {
            let digits = next() % 19;
            let raw = (next() % 10_000_000) as i128 * 10_i128.pow(digits as u32);
            let sign = if next().is_multiple_of(3) { -1 } else { 1 };
            xs.push(Value::Decimal(decimal(sign * raw)));
            if next().is_multiple_of(50) {
                factors.push(decimal(
                    sign * (next() % 100_000) as i128 * 10_i128.pow((next() % 19) as u32),
                ));
            }
        }
        let mut factors: Vec<Value> = factors.into_iter().map(Value::Decimal).collect();
        for i in [0, 1, -1, 3, 100, -25, i64::MAX, i64::MIN] {
            factors.push(Value::Integer(Integer::from(i)));
            xs.push(Value::Integer(Integer::from(i)));
        }
        let (mut values, mut errors) = (0, 0);
        for c in factors {
            let scaled = ScaledProduct::of(&c).unwrap();
            for x in &xs {
                let expected = f::arithmetic(Arith::Mul, x, &c);
                if expected.is_some() {
                    values += 1;
                } else {
                    errors += 1;
                }
                assert_eq!(
                    format!("{:?}", scaled.times(x)),
                    format!("{expected:?}"),
                    "{x:?} * {c:?}"
                );
            }
        }
        assert!(
            values > 1000 && errors > 1000,
            "{values} values, {errors} errors"
        );
    }

    /// `?x op ?y * c` and `?y * c op ?x`, compiled to the numeric test on the scaled product
    /// (`Operand::Scaled`), give for every operator what the general path gives on the same
    /// terms (`binary(op, x, x * c)` with the decimal product of `functions::arithmetic`):
    /// random decimals with few and many fraction digits and integers, a double, a string
    /// and an unbound variable, by constants whose products are exact, inexact (an error)
    /// or overflow.
    #[test]
    fn the_scaled_comparison_is_the_comparison_of_the_product() {
        use crate::event_index::{EventIndex, ValueCache};
        use crate::vars::VarTable;
        use oxrdf::{Literal, NamedNode};
        use spaseq_io::vocab::XSD;
        use std::rc::Rc;

        let dict = Dictionary::new();
        let typed = |value: &str, datatype: &str| {
            let datatype = NamedNode::new_unchecked(format!("{XSD}{datatype}"));
            dict.intern(Literal::new_typed_literal(value, datatype).into())
        };
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let p18 = 10_i128.pow(18);
        let mut terms = vec![
            typed("0", "integer"),
            typed("7", "integer"),
            typed("-9223372036854775808", "integer"),
            typed("9223372036854775807", "integer"),
            typed("0.0", "decimal"),
            typed("122.4216", "decimal"),
            typed("124.92", "decimal"),
            typed("0.000000000000000001", "decimal"),
            typed("170141183460469231731.687303715884105727", "decimal"),
            typed("-170141183460469231731.687303715884105728", "decimal"),
            typed("124.92", "double"),
            typed("NaN", "double"),
            typed("1.5", "float"),
            typed("124.92", "string"),
            dict.intern(Literal::new_simple_literal("x").into()),
        ];
        for _ in 0..24 {
            let digits = (next() % 19) as u32;
            let raw = (next() % 10_000_000) as i128 * 10_i128.pow(digits);
            let sign = if next().is_multiple_of(3) { -1 } else { 1 };
            let d = Decimal::from_be_bytes((sign * raw).to_be_bytes());
            terms.push(typed(&d.to_string(), "decimal"));
            // the same value as an integer when it is one, or near one
            let i = (sign * raw / p18) as i64 + (next() % 3) as i64 - 1;
            terms.push(typed(&i.to_string(), "integer"));
        }
        // (lexical form, datatype): exact or inexact products, intermediate overflows
        let constants = [
            ("0.98", "decimal"),
            ("1.025", "decimal"),
            ("-0.000000003", "decimal"),
            ("24305883351495604533.098", "decimal"), // i128::MAX / 7 (raw): overflows
            ("3", "integer"),
            ("-9223372036854775807", "integer"),
        ];
        let var = |name: &str| Expr::Var(name.into());
        let call = |op: &str, args: Vec<Expr>| Expr::Call {
            op: op.into(),
            args,
            distinct: false,
        };
        let mut vars = VarTable::default();
        let (x, y) = (vars.slot("x"), vars.slot("y"));
        let cache = Rc::new(ValueCache::default());
        let mut verdicts = std::collections::HashMap::new();
        let bindings: Vec<Option<TermId>> = terms.iter().copied().map(Some).chain([None]).collect();
        for (lexical, datatype) in constants {
            let c = Expr::Term(Term::Literal {
                value: lexical.into(),
                datatype: format!("{XSD}{datatype}"),
                language: None,
            });
            let factor = Value::of_term(typed(lexical, datatype), &dict);
            for (op, binary_op) in [
                ("<", Binary::Cmp(Ordering::Less, false)),
                ("<=", Binary::Cmp(Ordering::Less, true)),
                (">", Binary::Cmp(Ordering::Greater, false)),
                (">=", Binary::Cmp(Ordering::Greater, true)),
                ("=", Binary::Eq),
                ("!=", Binary::Ne),
            ] {
                for product_first in [false, true] {
                    // `c * ?y` for half of them
                    let product = if product_first == op.contains('<') {
                        call("*", vec![c.clone(), var("y")])
                    } else {
                        call("*", vec![var("y"), c.clone()])
                    };
                    let pair = if product_first {
                        vec![product, var("x")]
                    } else {
                        vec![var("x"), product]
                    };
                    let compiled = Compiled::new(&call(op, pair), &mut vars, &dict, None).unwrap();
                    let test = compiled
                        .numeric_test()
                        .expect("compiled to the numeric test");
                    for &bx in &bindings {
                        for &by in &bindings {
                            let mut row = vec![None; vars.len()];
                            row[x] = bx;
                            row[y] = by;
                            let value = |b: Option<TermId>| b.map(|id| Value::of_term(id, &dict));
                            let expected = (|| {
                                let a = value(bx)?;
                                let p = f::arithmetic(Arith::Mul, &value(by)?, &factor)?;
                                let (a, b) = if product_first { (p, a) } else { (a, p) };
                                binary(binary_op, &a, &b, &dict)?.ebv()
                            })();
                            // ?x is the event's object, ?y a run's value (cached, or not)
                            let event: Vec<[TermId; 3]> = bx.iter().map(|&o| [o, o, o]).collect();
                            let cached = EventIndex::with_values(&event, cache.clone());
                            for index in [cached, EventIndex::new(&event)] {
                                let env = Env {
                                    row: &row,
                                    dict: &dict,
                                    index: &index,
                                    run: None,
                                };
                                assert_eq!(
                                    compiled.ebv(&env),
                                    expected,
                                    "?x = {:?}, ?y = {:?}: {op} {product_first} {lexical}",
                                    bx.map(|i| dict.get(i)),
                                    by.map(|i| dict.get(i))
                                );
                                let verdict = match test.verdict(&env) {
                                    Verdict::Error if bx.is_some() && by.is_some() => {
                                        "Error (bound)".to_owned()
                                    }
                                    verdict => format!("{verdict:?}"),
                                };
                                *verdicts.entry(verdict).or_insert(0) += 1;
                            }
                        }
                    }
                }
            }
        }
        // the numeric test answered most, inexact products (errors) included; the rest
        // (doubles, floats, strings, overflows) fell to the general path
        let count = |k: &str| verdicts.get(k).copied().unwrap_or(0);
        let total: usize = verdicts.values().sum();
        assert!(
            count("Holds(true)") > total / 5
                && count("Holds(false)") > total / 5
                && count("Error (bound)") > total / 20
                && count("General") > total / 20,
            "{verdicts:?}"
        );
    }
}
