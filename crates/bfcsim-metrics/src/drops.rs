//! Packet drops counted by reason, kept in a sorted map so reports list reasons in a fixed order.

use std::collections::BTreeMap;

use serde::Serialize;

/// Drop counts by reason (e.g. `"buffer_full"`, `"ttl"`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct DropCounts(BTreeMap<String, u64>);

impl DropCounts {
    /// No drops.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts `n` drops for `reason` (allocates only the first time a reason is seen).
    pub fn add(&mut self, reason: &str, n: u64) {
        match self.0.get_mut(reason) {
            Some(count) => *count += n,
            None => {
                self.0.insert(reason.to_string(), n);
            }
        }
    }

    /// Drops for `reason`.
    pub fn get(&self, reason: &str) -> u64 {
        self.0.get(reason).copied().unwrap_or(0)
    }

    /// All drops.
    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    /// `(reason, count)` in reason order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.0.iter().map(|(r, &c)| (r.as_str(), c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_in_reason_order() {
        let mut d = DropCounts::new();
        d.add("ttl", 1);
        d.add("buffer_full", 2);
        d.add("ttl", 3);
        assert_eq!(
            d.iter().collect::<Vec<_>>(),
            vec![("buffer_full", 2), ("ttl", 4)]
        );
        assert_eq!((d.total(), d.get("ttl"), d.get("nope")), (6, 4, 0));
        assert_eq!(
            serde_json::to_string(&d).unwrap(),
            r#"{"buffer_full":2,"ttl":4}"#
        );
    }
}
