//! Tables tagged by one of their keys (`[scheme] name = "dctcp"`, `[topology] kind = "fat-tree"`), read so
//! that errors keep their line.
//!
//! serde's `#[serde(tag = ...)]` buffers the whole table before choosing the variant, which throws away the
//! positions the TOML parser attached to each value: an error in `tors = -1` would be reported at the
//! `[topology]` header. Here, when the tag is the table's first key (as people write it), the rest of the
//! table streams straight into the chosen variant with positions intact; otherwise the table is buffered and
//! still read correctly, only with coarser error positions.

use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{DeserializeSeed, Deserializer, Error, MapAccess, Visitor};

/// A type stored as a table with a tag key naming its variant.
pub trait Tagged: Sized {
    /// The tag key (`name`, `kind`).
    const TAG: &'static str;
    /// The accepted tag values, for error messages.
    const VARIANTS: &'static [&'static str];
    /// The variant of a table that leaves the tag out (so `--set topology.tors=16` works on a file that
    /// never wrote `[topology]`).
    const DEFAULT: &'static str;
    /// Reads variant `name` from the remaining keys of the table. Unknown names should answer
    /// `D::Error::unknown_variant(name, Self::VARIANTS)`.
    fn from_variant<'de, D: Deserializer<'de>>(name: &str, rest: D) -> Result<Self, D::Error>;
}

thread_local! {
    static DEFAULTS: RefCell<Vec<(&'static str, String)>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with the variant a tagless table of type `T` means replaced by `tag`: a scheme preset decides what
/// `[flow_control]` means when the file leaves out `kind`, and the file is still read with its lines.
pub fn with_default<T: Tagged, R>(tag: Option<&str>, f: impl FnOnce() -> R) -> R {
    let Some(tag) = tag else {
        return f();
    };
    let key = std::any::type_name::<T>();
    DEFAULTS.with(|d| d.borrow_mut().push((key, tag.to_owned())));
    let out = f();
    DEFAULTS.with(|d| d.borrow_mut().pop());
    out
}

fn default_tag<T: Tagged>() -> String {
    let key = std::any::type_name::<T>();
    DEFAULTS
        .with(|d| {
            d.borrow()
                .iter()
                .rev()
                .find(|(k, _)| *k == key)
                .map(|(_, t)| t.clone())
        })
        .unwrap_or_else(|| T::DEFAULT.to_owned())
}

/// Deserializes a [`Tagged`] table; use as the body of a `Deserialize` impl.
pub fn deserialize<'de, D: Deserializer<'de>, T: Tagged>(d: D) -> Result<T, D::Error> {
    d.deserialize_map(TaggedVisitor(PhantomData))
}

struct TaggedVisitor<T>(PhantomData<T>);

impl<'de, T: Tagged> Visitor<'de> for TaggedVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = T::VARIANTS.iter().map(|v| format!("`{v}`")).collect();
        write!(f, "a table with `{}` = one of {}", T::TAG, names.join(", "))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return T::from_variant(&default_tag::<T>(), toml::Value::Table(toml::Table::new()))
                .map_err(|e| A::Error::custom(e.message().trim()));
        };
        if first == T::TAG {
            let name = map.next_value_seed(VariantName(T::VARIANTS))?;
            return T::from_variant(&name, MapAccessDeserializer::new(map));
        }
        let mut table = toml::Table::new();
        table.insert(first, map.next_value()?);
        while let Some(key) = map.next_key::<String>()? {
            table.insert(key, map.next_value()?);
        }
        let name = match table.remove(T::TAG) {
            None => default_tag::<T>(),
            Some(toml::Value::String(name)) if T::VARIANTS.contains(&name.as_str()) => name,
            Some(toml::Value::String(name)) => {
                return Err(A::Error::unknown_variant(&name, T::VARIANTS));
            }
            Some(_) => return Err(A::Error::custom(format!("`{}` must be a string", T::TAG))),
        };
        T::from_variant(&name, toml::Value::Table(table))
            .map_err(|e| A::Error::custom(e.message().trim()))
    }
}

/// Reads a tag value and checks it names a variant while the parser still knows where the value is, so an
/// unknown name is reported on its own line.
struct VariantName(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for VariantName {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        let name = <String as serde::Deserialize>::deserialize(d)?;
        if self.0.contains(&name.as_str()) {
            Ok(name)
        } else {
            Err(D::Error::unknown_variant(&name, self.0))
        }
    }
}
