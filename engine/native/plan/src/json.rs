//! Reading the plan's JSON encoding (docs/plan.md, "Encoding"): a cursor over a
//! `serde_json::Value` that knows where it is, so every error names the field it is about
//! (`plan.gpms.B.filters[0]: ...`).

use serde_json::{Map, Value};
use std::fmt;

/// A plan that does not have the shape docs/plan.md describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError {
    /// Where in the plan, e.g. `plan.run_indexes[1].range`.
    pub path: String,
    pub message: String,
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for PlanError {}

pub type Result<T> = std::result::Result<T, PlanError>;

/// A value of the plan and the path that leads to it.
#[derive(Clone)]
pub struct At<'a> {
    pub value: &'a Value,
    pub path: String,
}

impl<'a> At<'a> {
    pub fn root(value: &'a Value) -> Self {
        At {
            value,
            path: "plan".to_owned(),
        }
    }

    pub fn error<T>(&self, message: impl Into<String>) -> Result<T> {
        Err(PlanError {
            path: self.path.clone(),
            message: message.into(),
        })
    }

    fn object(&self) -> Result<&'a Map<String, Value>> {
        match self.value {
            Value::Object(map) => Ok(map),
            other => self.error(format!("expected an object, found {}", kind(other))),
        }
    }

    /// The `@type` tag of a dataclass object.
    pub fn tag(&self) -> Result<&'a str> {
        match self.object()?.get("@type").and_then(Value::as_str) {
            Some(t) => Ok(t),
            None => self.error("expected an object with @type"),
        }
    }

    /// This value, checked to be the dataclass `expected`.
    pub fn typed(&self, expected: &str) -> Result<&Self> {
        match self.tag()? {
            t if t == expected => Ok(self),
            t => self.error(format!("expected a {expected}, found a {t}")),
        }
    }

    /// Member `name` of this object, given its value: its path is this one's `.name`.
    fn member(&self, name: &str, value: &'a Value) -> At<'a> {
        At {
            value,
            path: format!("{}.{name}", self.path),
        }
    }

    /// A member of an object.
    pub fn get(&self, name: &str) -> Result<At<'a>> {
        match self.object()?.get(name) {
            Some(value) => Ok(self.member(name, value)),
            None => self.error(format!("missing field {name}")),
        }
    }

    /// Whether a member holds null (an optional field without a value).
    pub fn is_null(&self) -> bool {
        self.value.is_null()
    }

    pub fn str(&self) -> Result<&'a str> {
        match self.value.as_str() {
            Some(s) => Ok(s),
            None => self.error(format!("expected a string, found {}", kind(self.value))),
        }
    }

    pub fn string(&self) -> Result<String> {
        self.str().map(str::to_owned)
    }

    pub fn opt_string(&self) -> Result<Option<String>> {
        if self.is_null() {
            Ok(None)
        } else {
            self.string().map(Some)
        }
    }

    pub fn bool(&self) -> Result<bool> {
        match self.value.as_bool() {
            Some(b) => Ok(b),
            None => self.error(format!(
                "expected true or false, found {}",
                kind(self.value)
            )),
        }
    }

    /// A number member, `default` when the object does not have it (a field added later).
    pub fn f64_or(&self, name: &str, default: f64) -> Result<f64> {
        match self.object()?.get(name) {
            None => Ok(default),
            Some(value) => match value.as_f64() {
                Some(x) => Ok(x),
                None => self
                    .member(name, value)
                    .error(format!("expected a number, found {}", kind(value))),
            },
        }
    }

    pub fn usize(&self) -> Result<usize> {
        match self.value.as_u64().map(usize::try_from) {
            Some(Ok(n)) => Ok(n),
            _ => self.error(format!(
                "expected a non-negative integer, found {}",
                kind(self.value)
            )),
        }
    }

    /// The items of an array (a Python tuple).
    pub fn items(&self) -> Result<Vec<At<'a>>> {
        match self.value {
            Value::Array(items) => Ok(items
                .iter()
                .enumerate()
                .map(|(i, value)| At {
                    value,
                    path: format!("{}[{i}]", self.path),
                })
                .collect()),
            other => self.error(format!("expected an array, found {}", kind(other))),
        }
    }

    /// The members of a frozenset, `{"@set": [...]}`.
    pub fn set(&self) -> Result<Vec<At<'a>>> {
        self.get("@set")?.items()
    }

    /// The entries of a plain dict (string keys, in the plan's order).
    pub fn entries(&self) -> Result<Vec<(&'a str, At<'a>)>> {
        let map = self.object()?;
        if map.contains_key("@type") {
            return self.error("expected a plain object, found a dataclass");
        }
        Ok(map
            .iter()
            .map(|(k, value)| (k.as_str(), self.member(k, value)))
            .collect())
    }

    /// The fields of a dataclass object (without its `@type`), in the plan's order.
    pub fn entries_of_dataclass(&self) -> Result<Vec<(&'a str, At<'a>)>> {
        self.tag()?;
        let map = self.object()?;
        Ok(map
            .iter()
            .filter(|(k, _)| k.as_str() != "@type")
            .map(|(k, value)| (k.as_str(), self.member(k, value)))
            .collect())
    }

    /// An exact decimal, `{"@decimal": "0.3"}` (times and window lengths), as written.
    pub fn decimal(&self) -> Result<&'a str> {
        self.get("@decimal")?.str()
    }

    pub fn strings(&self) -> Result<Vec<String>> {
        self.items()?.iter().map(At::string).collect()
    }

    pub fn string_set(&self) -> Result<Vec<String>> {
        self.set()?.iter().map(At::string).collect()
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
