//! The vocabulary prefixes spaseq's crates need as strings. Whole IRIs come from
//! `oxrdf::vocab` (`xsd::STRING`, `rdf::LANG_STRING`, ...); what oxrdf has no constant for,
//! a namespace to test or strip a prefix with, is written here, once, in the lowest crate
//! that needs it.

/// The XML Schema datatypes' namespace (`xsd:`), the prefix of every `oxrdf::vocab::xsd` IRI.
pub const XSD: &str = "http://www.w3.org/2001/XMLSchema#";
