//! Why a GPM or a FILTER expression is not evaluated by this core's evaluators: the
//! planner's reason (`_native.gpm_evaluators`) and the engine's refusal of a plan, in words.

use spaseq_plan::json::PlanError;
use std::fmt;

/// Why a GPM or an expression cannot be compiled; its text is the reason given to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompileError {
    /// Something the evaluator lacks (EXISTS, a function, a property path, a GRAPH block,
    /// a GPM on the other path, ...), in words.
    Unsupported(String),
    /// A plan term that is no RDF term (its IRI, blank node, language tag or datatype), or
    /// N-Triples text that is none.
    Term(String),
    /// An expression's plan JSON that is not JSON of an expression of the plan format.
    Plan(PlanError),
    /// A SPARQL body spargebra does not parse, or a base IRI or prefix it refuses.
    Sparql(String),
    /// The plan has no SPARQL body for the GPM.
    NoBody,
    /// The error of GPM `gpm` (`GPM NAME: error`).
    Gpm {
        gpm: String,
        error: Box<CompileError>,
    },
}

impl CompileError {
    /// `self` as an error of GPM `gpm`.
    pub fn in_gpm(self, gpm: &str) -> Self {
        CompileError::Gpm {
            gpm: gpm.to_owned(),
            error: Box::new(self),
        }
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileError::Unsupported(why)
            | CompileError::Term(why)
            | CompileError::Sparql(why) => f.write_str(why),
            CompileError::Plan(e) => e.fmt(f),
            CompileError::NoBody => f.write_str("the plan has no body for it"),
            CompileError::Gpm { gpm, error } => write!(f, "GPM {gpm}: {error}"),
        }
    }
}

impl std::error::Error for CompileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CompileError::Plan(e) => Some(e),
            CompileError::Gpm { error, .. } => Some(error.as_ref()),
            _ => None,
        }
    }
}

/// Something the evaluator lacks, in words.
pub(crate) fn unsupported(why: impl Into<String>) -> CompileError {
    CompileError::Unsupported(why.into())
}
