//! The SPARQL path, natively: a GPM body outside the compiled subset (OPTIONAL, UNION,
//! MINUS, BIND, VALUES, property paths, sub-selects, functions the FILTER programs lack) is
//! evaluated by `spareval` (the SPARQL evaluator pyoxigraph is built from, at the same
//! version) over the event's graph as the default graph, with the run's bindings of the
//! body's variables substituted. Left to the Python matcher: bodies reading the knowledge
//! base (`GRAPH`), `SERVICE`, and calls of non-standard functions (`spaseq:` stream and run
//! functions in such bodies), whose answers need Python's state.
//!
//! As on the compiled path, terms keep the event's spelling and join by identity (decision
//! 7), and repeated solutions count once (decision 9).

use super::algebra_parts::{
    expression_parts, expression_parts_mut, pattern_parts, pattern_parts_mut, Part, PartMut,
};
use super::error::{unsupported, CompileError};
use super::event_index::EventIndex;
use super::value::Value;
use crate::vars::{Row, Slot, VarTable};
use oxrdf::{Dataset, GraphName, Quad, Variable};
use spareval::{QueryEvaluator, QueryResults};
use spargebra::algebra::{
    AggregateExpression, AggregateFunction, Expression, Function, GraphPattern,
};
use spargebra::term::TermPattern;
use spargebra::{Query, SparqlParser};
use spaseq_io::dictionary::{Dictionary, TermId};
use spaseq_io::vocab::XSD;
use spaseq_plan::plan::GpmPlan;
use std::collections::{BTreeMap, HashMap, HashSet};

/// One GPM body prepared for spareval.
#[derive(Clone)]
pub struct SparqlGpm {
    /// The query's prefixes and base, and the body's group without its braces: a context
    /// goes in front of it as `VALUES`, as the Python matcher writes it.
    parser: SparqlParser,
    inner: String,
    /// `SELECT * WHERE body`
    query: Query,
    /// The same without its top-level FILTERs: solutions whatever the context (`base`).
    filterless: Query,
    /// The body's variables and their slots (what is substituted and read back).
    vars: Vec<(Variable, Slot)>,
    local_slots: Vec<Slot>,
    required: Vec<TermId>,
    width: usize,
}

impl std::fmt::Debug for SparqlGpm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SparqlGpm({})", self.query)
    }
}

impl SparqlGpm {
    /// Prepare GPM `plan` (its body written `body`); Err says why it stays with Python.
    pub fn compile(
        plan: &GpmPlan,
        body: &str,
        prefixes: &BTreeMap<String, String>,
        base_iri: Option<&str>,
        vars: &mut VarTable,
        dict: &Dictionary,
    ) -> Result<Self, CompileError> {
        if plan.run_aware {
            return Err(CompileError::Unsupported(format!(
                "GPM {} calls run functions in a SPARQL body",
                plan.name
            )));
        }
        let mut parser = SparqlParser::new();
        if let Some(base) = base_iri {
            parser = parser
                .with_base_iri(base)
                .map_err(|e| CompileError::Sparql(format!("bad base IRI <{base}>: {e}")))?;
        }
        for (prefix, iri) in prefixes {
            parser = parser
                .with_prefix(prefix, iri)
                .map_err(|e| CompileError::Sparql(format!("bad prefix {prefix}: <{iri}>: {e}")))?;
        }
        let query = parser
            .clone()
            .parse_query(&format!("SELECT * WHERE {body}"))
            .map(same_term_by_value)
            .map_err(|e| {
                CompileError::Sparql(format!("spargebra cannot parse the body: {e}"))
                    .in_gpm(&plan.name)
            })?;
        let Query::Select {
            pattern,
            dataset,
            base_iri,
        } = &query
        else {
            return Err(CompileError::Unsupported("not a SELECT".to_owned()));
        };
        let mut names = Vec::new();
        check_pattern(pattern, &mut names).map_err(|why| why.in_gpm(&plan.name))?;
        let trimmed = body.trim();
        let sub_select = trimmed
            .strip_prefix('{')
            .map(|rest| rest.trim_start().to_ascii_uppercase().starts_with("SELECT"))
            .unwrap_or(false);
        let inner = if sub_select || !trimmed.starts_with('{') || !trimmed.ends_with('}') {
            trimmed.to_owned()
        } else {
            trimmed[1..trimmed.len() - 1].to_owned()
        };
        let filterless = Query::Select {
            pattern: strip_filters(pattern.clone()),
            dataset: dataset.clone(),
            base_iri: base_iri.clone(),
        };
        names.sort();
        names.dedup();
        let vars_of = names
            .iter()
            .map(|n| (Variable::new_unchecked(n.clone()), vars.slot(n)))
            .collect();
        let local_slots = plan.local_vars.iter().map(|v| vars.slot(v)).collect();
        let required = plan
            .required
            .iter()
            .map(|iri| dict.intern(oxrdf::NamedNode::new_unchecked(iri.clone()).into()))
            .collect();
        Ok(SparqlGpm {
            parser,
            inner,
            query,
            filterless,
            vars: vars_of,
            local_slots,
            required,
            width: vars.len(),
        })
    }

    /// Constant predicates every solution needs (the pre-filter).
    pub fn may_match(&self, index: &EventIndex) -> bool {
        index.has_predicates(&self.required)
    }

    pub fn local_slots(&self) -> &[Slot] {
        &self.local_slots
    }

    /// eval(GPM, event, mu): every mu ∪ nu, nu a solution of the body on the event with
    /// mu's values of the body's variables substituted, each distinct row once.
    pub fn results(
        &self,
        index: &EventIndex,
        mu: &[Option<TermId>],
        dict: &Dictionary,
        out: &mut Vec<Row>,
    ) {
        // mu's values of the body's variables: VALUES in front of the group (blank nodes,
        // which VALUES cannot write, substituted), exactly the Python matcher's query
        let mut head = String::new();
        let mut row = String::new();
        let mut blank = Vec::new();
        for (var, slot) in &self.vars {
            if let Some(Some(id)) = mu.get(*slot) {
                match dict.get(*id) {
                    t @ oxrdf::Term::BlankNode(_) => blank.push((var.clone(), t.clone())),
                    t => {
                        head.push_str(&format!(" {var}"));
                        row.push_str(&format!(" {t}"));
                    }
                }
            }
        }
        if head.is_empty() && blank.is_empty() {
            return self.solve(&self.query, &[], index, mu, dict, out);
        }
        let values = if head.is_empty() {
            String::new()
        } else {
            format!("VALUES ({head} ) {{ ({row} ) }} ")
        };
        let text = format!("SELECT * WHERE {{ {values}{} }}", self.inner);
        if let Ok(query) = self.parser.clone().parse_query(&text) {
            self.solve(&same_term_by_value(query), &blank, index, mu, dict, out);
        }
    }

    /// The solutions without the top-level FILTERs and without a context (a superset of
    /// `results` for any mu, restricted to the body's variables), rows `width` wide.
    pub fn base(&self, index: &EventIndex, width: usize, dict: &Dictionary, out: &mut Vec<Row>) {
        self.solve(
            &self.filterless,
            &[],
            index,
            &vec![None; width.max(self.width)],
            dict,
            out,
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn solve(
        &self,
        query: &Query,
        substitutions: &[(Variable, oxrdf::Term)],
        index: &EventIndex,
        mu: &[Option<TermId>],
        dict: &Dictionary,
        out: &mut Vec<Row>,
    ) {
        let mut dataset = Dataset::new();
        for (s, p, o) in index.triples() {
            let (oxrdf::Term::NamedNode(p), Ok(s)) = (
                dict.get(p).clone(),
                oxrdf::NamedOrBlankNode::try_from(dict.get(s).clone()),
            ) else {
                continue;
            };
            dataset.insert(&Quad::new(
                s,
                p,
                dict.get(o).clone(),
                GraphName::DefaultGraph,
            ));
        }
        let evaluator = QueryEvaluator::new();
        let mut prepared = evaluator.prepare(query);
        for (var, term) in substitutions {
            prepared = prepared.substitute_variable(var.clone(), term.clone());
        }
        // an evaluation error is no solution, as a FILTER's error is false
        let Ok(QueryResults::Solutions(solutions)) = prepared.execute(&dataset) else {
            return;
        };
        // the event's spellings of values, gathered when a canonical literal first comes back
        let mut back: Option<HashMap<oxrdf::Term, oxrdf::Term>> = None;
        let mut seen = HashSet::new();
        let width = mu.len().max(self.width);
        for solution in solutions.flatten() {
            let mut row = mu.to_vec();
            row.resize(width, None);
            for (var, term) in solution.iter() {
                let Some(&(_, slot)) = self.vars.iter().find(|(v, _)| v == var) else {
                    continue; // a sub-select's or blank node's internal variable
                };
                if row[slot].is_none() {
                    // mu's values stay as mu spells them (the VALUES join made them equal)
                    // the dataset keeps spellings, so a non-canonical literal is the event's
                    // (or the query's) own; a canonical one is kept if the event holds it,
                    // else it is computed and takes the event's spelling of its value
                    let term = match term {
                        oxrdf::Term::Literal(_) if canonical(term, dict).is_none() => {
                            let back = back.get_or_insert_with(|| spellings(index, dict));
                            back.get(term).unwrap_or(term).clone()
                        }
                        _ => term.clone(),
                    };
                    row[slot] = Some(dict.intern(term));
                }
            }
            if seen.insert(row.clone()) {
                out.push(row);
            }
        }
    }
}

/// A literal's canonical form (what pyoxigraph's store keeps of it and what SPARQL
/// expressions compute), when it differs from its spelling; None otherwise.
fn canonical(term: &oxrdf::Term, dict: &Dictionary) -> Option<oxrdf::Term> {
    let oxrdf::Term::Literal(lit) = term else {
        return None;
    };
    let c = Value::of_literal(lit).to_term(dict);
    match &c {
        oxrdf::Term::Literal(l) if l.datatype() == lit.datatype() && l != lit => Some(c),
        _ => None,
    }
}

/// The event's spelling of each literal value it holds, by the value's canonical form
/// (Python's `sparql_store.spellings`): the canonical form itself when the event holds it,
/// else the least of the event's spellings of the value (N-Triples text, code point order),
/// whatever the triples' order. A value a SPARQL expression computes, canonical, is given
/// back in this spelling (decision 7).
fn spellings(index: &EventIndex, dict: &Dictionary) -> HashMap<oxrdf::Term, oxrdf::Term> {
    let mut back: HashMap<oxrdf::Term, oxrdf::Term> = HashMap::new();
    for (_, _, o) in index.triples() {
        let term = dict.get(o);
        let oxrdf::Term::Literal(_) = term else {
            continue;
        };
        let c = canonical(term, dict).unwrap_or_else(|| term.clone());
        // the canonical spelling, once held, stays; otherwise the least spelling wins
        let better = match back.get(&c) {
            None => true,
            Some(held) => *held != c && (*term == c || term.to_string() < held.to_string()),
        };
        if better {
            back.insert(c, term.clone());
        }
    }
    back
}

/// The query with `sameTerm(a, b)` answered as pyoxigraph's store answers it, the compiled
/// FILTERs too: the store keeps literals canonical, so two spellings of one value of one
/// datatype are the same term there (decision 7), while spareval over the event's own
/// triples compares spellings. `STR` gives a literal's canonical form in spareval.
fn same_term_by_value(query: Query) -> Query {
    match query {
        Query::Select {
            mut pattern,
            dataset,
            base_iri,
        } => {
            rewrite_pattern(&mut pattern);
            Query::Select {
                pattern,
                dataset,
                base_iri,
            }
        }
        other => other,
    }
}

fn rewrite_pattern(p: &mut GraphPattern) {
    for part in pattern_parts_mut(p) {
        rewrite_part(part);
    }
}

fn rewrite_part(part: PartMut<'_>) {
    match part {
        PartMut::Pattern(p) => rewrite_pattern(p),
        PartMut::Expression(e) => rewrite_expression(e),
    }
}

fn rewrite_expression(e: &mut Expression) {
    for part in expression_parts_mut(e) {
        rewrite_part(part);
    }
    if let Expression::SameTerm(a, b) = &*e {
        // sameTerm(a, b) || (isLiteral(a) && isLiteral(b) && DATATYPE(a) = DATATYPE(b)
        //   && LANG(a) = LANG(b) && LANGDIR(a) = LANGDIR(b) && STR(a) = STR(b))
        let (a, b) = (a.as_ref().clone(), b.as_ref().clone());
        let call = |f: Function, x: &Expression| Expression::FunctionCall(f, vec![x.clone()]);
        let literals = Expression::And(
            Box::new(call(Function::IsLiteral, &a)),
            Box::new(call(Function::IsLiteral, &b)),
        );
        let same_value = [
            Function::Datatype,
            Function::Lang,
            Function::LangDir,
            Function::Str,
        ]
        .into_iter()
        .fold(literals, |acc, f| {
            let equal = Expression::Equal(Box::new(call(f.clone(), &a)), Box::new(call(f, &b)));
            Expression::And(Box::new(acc), Box::new(equal))
        });
        *e = Expression::Or(Box::new(e.clone()), Box::new(same_value));
    }
}

/// Remove the FILTERs at the top of a group (under the projection of `SELECT *`).
fn strip_filters(pattern: GraphPattern) -> GraphPattern {
    match pattern {
        GraphPattern::Filter { inner, .. } => strip_filters(*inner),
        GraphPattern::Project { inner, variables } => GraphPattern::Project {
            inner: Box::new(strip_filters(*inner)),
            variables,
        },
        other => other,
    }
}

fn var_of(t: &TermPattern, names: &mut Vec<String>) {
    if let TermPattern::Variable(v) = t {
        names.push(v.as_str().to_owned());
    }
}

/// Whether spareval can answer the pattern alone (no KB, no service, standard functions),
/// collecting the variables it names.
fn check_pattern(p: &GraphPattern, names: &mut Vec<String>) -> Result<(), CompileError> {
    match p {
        GraphPattern::Bgp { patterns } => {
            for tp in patterns {
                var_of(&tp.subject, names);
                if let spargebra::term::NamedNodePattern::Variable(v) = &tp.predicate {
                    names.push(v.as_str().to_owned());
                }
                var_of(&tp.object, names);
            }
        }
        GraphPattern::Path {
            subject, object, ..
        } => {
            var_of(subject, names);
            var_of(object, names);
        }
        GraphPattern::Extend { variable, .. } => names.push(variable.as_str().to_owned()),
        GraphPattern::Values { variables, .. } | GraphPattern::Project { variables, .. } => {
            names.extend(variables.iter().map(|v| v.as_str().to_owned()));
        }
        GraphPattern::Group {
            variables,
            aggregates,
            ..
        } => {
            names.extend(variables.iter().map(|v| v.as_str().to_owned()));
            for (v, aggregate) in aggregates {
                names.push(v.as_str().to_owned());
                if let AggregateExpression::FunctionCall {
                    name: AggregateFunction::Custom(iri),
                    ..
                } = aggregate
                {
                    return Err(unsupported(format!(
                        "the custom aggregate <{}>",
                        iri.as_str()
                    )));
                }
            }
        }
        GraphPattern::Graph { .. } => {
            return Err(unsupported("a GRAPH block (the knowledge base)"))
        }
        GraphPattern::Service { .. } => return Err(unsupported("SERVICE")),
        GraphPattern::Join { .. }
        | GraphPattern::Union { .. }
        | GraphPattern::Minus { .. }
        | GraphPattern::LeftJoin { .. }
        | GraphPattern::Filter { .. }
        | GraphPattern::OrderBy { .. }
        | GraphPattern::Distinct { .. }
        | GraphPattern::Reduced { .. }
        | GraphPattern::Slice { .. } => {}
        #[allow(unreachable_patterns)]
        _ => return Err(unsupported("an extension pattern")),
    }
    pattern_parts(p)
        .into_iter()
        .try_for_each(|part| check_part(part, names))
}

fn check_part(part: Part<'_>, names: &mut Vec<String>) -> Result<(), CompileError> {
    match part {
        Part::Pattern(p) => check_pattern(p, names),
        Part::Expression(e) => check_expression(e, names),
    }
}

fn check_expression(e: &Expression, names: &mut Vec<String>) -> Result<(), CompileError> {
    match e {
        Expression::Variable(v) | Expression::Bound(v) => names.push(v.as_str().to_owned()),
        Expression::FunctionCall(Function::Custom(iri), _) if !iri.as_str().starts_with(XSD) => {
            return Err(unsupported(format!("the function <{}>", iri.as_str())));
        }
        _ => {}
    }
    expression_parts(e)
        .into_iter()
        .try_for_each(|part| check_part(part, names))
}
