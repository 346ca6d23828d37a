//! The plan's JSON encoding (docs/plan.md, "Encoding"; plan.schema.json) read with serde: a
//! dataclass is `{"@type": "Name", field: ...}`, a frozenset `{"@set": [...]}`. Errors name
//! the field they are about (`plan.gpms.B.filters[0]: ...`, through serde_path_to_error).

use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;
use std::marker::PhantomData;

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

/// Read `T` from JSON text (the plan, or a part of one such as an expression).
pub fn from_json<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T> {
    let value: Value = serde_json::from_str(text).map_err(|err| PlanError {
        path: "plan".to_owned(),
        message: format!("not JSON: {err}"),
    })?;
    read(&value)
}

/// Read `T` from a plan value; the error's path starts at `plan` (`plan.gpms.A.path`).
pub fn read<'de, T: Deserialize<'de>>(value: &'de Value) -> Result<T> {
    serde_path_to_error::deserialize(value).map_err(|err| {
        let path = err.path().to_string();
        PlanError {
            path: match path.as_str() {
                "." => "plan".to_owned(),
                p if p.starts_with('[') => format!("plan{p}"),
                p => format!("plan.{p}"),
            },
            message: err.into_inner().to_string(),
        }
    })
}

/// A dataclass of the plan, `{"@type": tag, field: ...}`, read by `tagged`.
pub(crate) trait Tagged: Sized {
    /// What is expected, for messages: "a Step", "an expression".
    const WHAT: &'static str;
    /// The value whose `@type` is `tag`, from its other fields.
    fn fields<'de, D: Deserializer<'de>>(
        tag: &str,
        fields: D,
    ) -> std::result::Result<Self, D::Error>;
    /// The value of an object without `@type` (a term, where a pattern may hold one).
    fn untagged(_object: Value) -> serde_json::Result<Self> {
        Err(serde_json::Error::custom(format!(
            "expected {} (an object with @type)",
            Self::WHAT
        )))
    }
}

/// Read a dataclass: its `@type`, then its other fields. `@type` comes first in the plan's text
/// and in serde_json's (sorted) maps; an object read elsewhere with `@type` later is read
/// whole first, and errors inside it name the object only.
pub(crate) fn tagged<'de, D: Deserializer<'de>, T: Tagged>(
    d: D,
) -> std::result::Result<T, D::Error> {
    struct Dataclass<T>(PhantomData<T>);
    impl<'de, T: Tagged> Visitor<'de> for Dataclass<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{} (an object with @type)", T::WHAT)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<T, A::Error> {
            let first: Option<String> = map.next_key()?;
            if first.as_deref() == Some("@type") {
                let tag: String = map.next_value()?;
                return T::fields(&tag, MapAccessDeserializer::new(map));
            }
            let mut object = Map::new();
            let mut key = first;
            while let Some(k) = key {
                object.insert(k, map.next_value()?);
                key = map.next_key()?;
            }
            match object.remove("@type") {
                Some(Value::String(tag)) => T::fields(&tag, Value::Object(object)),
                Some(_) => Err(serde_json::Error::custom("@type: expected a string")),
                None => T::untagged(Value::Object(object)),
            }
            .map_err(A::Error::custom)
        }
    }
    d.deserialize_map(Dataclass(PhantomData))
}

/// The error for a dataclass of another type than expected.
pub(crate) fn unexpected<E: serde::de::Error>(what: &str, tag: &str) -> E {
    E::custom(format!("expected {what}, found a {tag}"))
}

/// `Deserialize` for types that are `Tagged`: through `tagged`.
macro_rules! via_tagged {
    ($($ty:ident),* $(,)?) => {$(
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                $crate::json::tagged(d)
            }
        }
    )*};
}
pub(crate) use via_tagged;

/// Dataclasses read by serde's derive: `Type = "@type"`. The derive goes with
/// `#[serde(remote = "Self")]`, which makes it the inherent `Type::deserialize`, reading the
/// fields only; `Deserialize` (`serde_json::from_str::<Type>`, ...) checks `@type` first.
macro_rules! dataclass {
    ($($ty:ident = $tag:literal),* $(,)?) => {$(
        impl $crate::json::Tagged for $ty {
            const WHAT: &'static str = concat!("a ", $tag);
            fn fields<'de, D: serde::Deserializer<'de>>(
                tag: &str,
                fields: D,
            ) -> std::result::Result<Self, D::Error> {
                if tag != $tag {
                    return Err($crate::json::unexpected(Self::WHAT, tag));
                }
                $ty::deserialize(fields)
            }
        }
        $crate::json::via_tagged!($ty);
    )*};
}
pub(crate) use dataclass;

/// A field that may be null but not missing (serde's derive reads a missing `Option` as None;
/// with `deserialize_with` a missing field is an error).
pub(crate) fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> std::result::Result<Option<T>, D::Error> {
    Option::deserialize(d)
}

/// A frozenset, `{"@set": [...]}` (members sorted by their JSON text).
pub(crate) fn set<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> std::result::Result<Vec<T>, D::Error> {
    #[derive(serde::Deserialize)]
    struct Set<T> {
        #[serde(rename = "@set")]
        members: Vec<T>,
    }
    Set::deserialize(d).map(|s| s.members)
}
