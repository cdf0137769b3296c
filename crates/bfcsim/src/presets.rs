//! Named schemes. A scheme is a preset of the configuration sections it needs (`[cc]`, `[flow_control]`,
//! `[switch]`, `[nic]`), as the paper that evaluates it configures them; the experiment file's own keys
//! override the preset's, key by key. `bfcsim schemes` prints every preset with what it sets.

pub use bfcsim_schemes::fabric::Preset;
use bfcsim_schemes::fabric::TAGGED;
use bfcsim_schemes::paths::EntropyConfig;

/// Every named scheme: each congestion controller's presets ([`bfcsim_schemes::cc::CcConfig::catalog`]), then
/// each flow-control scheme's ([`bfcsim_sim::FlowControl::catalog`]), in their registries' order.
pub fn presets() -> &'static [Preset] {
    static ALL: std::sync::OnceLock<Vec<Preset>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let controllers = bfcsim_schemes::cc::CcConfig::catalog()
            .into_iter()
            .flat_map(|c| c.presets);
        let schemes = bfcsim_sim::FlowControl::catalog()
            .into_iter()
            .flat_map(|e| e.presets);
        controllers.chain(schemes).copied().collect()
    })
}

/// The text of `bfcsim schemes`: every named scheme with what it sets, then every congestion controller and
/// flow-control mechanism with its parameters and defaults (from the code's own defaults, so it cannot drift).
pub fn describe() -> String {
    use std::fmt::Write;
    let mut out = String::from(
        "Named schemes ([scheme] name = ...; the file's own keys override what they set):\n",
    );
    for p in presets() {
        let _ = writeln!(out, "  {:<16} {}", p.name, p.summary);
        let sets: Vec<String> = p
            .table()
            .iter()
            .flat_map(|(section, t)| {
                t.as_table()
                    .into_iter()
                    .flatten()
                    .map(move |(k, v)| format!("{section}.{k}={v}"))
            })
            .collect();
        let _ = writeln!(out, "  {:<16}   sets {}", "", sets.join(" "));
    }
    out.push_str("\nCongestion control ([cc] name = ...):\n");
    for s in bfcsim_schemes::catalog::catalog() {
        let _ = writeln!(out, "  {:<16} {}", s.name, s.summary);
        for (k, v) in &s.params {
            let _ = writeln!(out, "      {k:<22} = {v}");
        }
    }
    out.push_str("\nPer-hop flow control ([flow_control] kind = ...):\n");
    for entry in bfcsim_sim::FlowControl::catalog() {
        let _ = writeln!(out, "  {:<16} {}", entry.kind, entry.summary);
        for (k, v) in bfcsim_schemes::catalog::config_params(&entry.defaults)
            .iter()
            .filter(|(k, _)| k != "kind")
            .chain(&entry.optional)
        {
            let _ = writeln!(out, "      {k:<22} = {v}");
        }
    }
    out.push_str(
        "\nPath selection at the sender ([nic] paths = \"flow\" (ECMP on the flow's hash, the default), \
         \"oblivious\" (a fresh entropy per packet) or \"reps\" (recycled entropy packet spraying); [nic.entropy]):\n",
    );
    for (k, v) in bfcsim_schemes::catalog::config_params(&EntropyConfig::default()) {
        let _ = writeln!(out, "      {k:<22} = {v}");
    }
    out
}

/// The preset named `name`.
pub fn find(name: &str) -> Option<&'static Preset> {
    presets().iter().find(|p| p.name == name)
}

/// Every preset name, for error messages.
pub fn names() -> Vec<&'static str> {
    presets().iter().map(|p| p.name).collect()
}

/// Lays `over` on top of `base`, key by key; a tagged section that names another variant replaces the base's.
pub fn merge(base: &mut toml::Table, over: toml::Table) {
    merge_at(base, over, true);
}

fn merge_at(base: &mut toml::Table, over: toml::Table, top: bool) {
    for (key, value) in over {
        let replace = top
            && TAGGED.iter().any(|&(section, tag)| {
                section == key && {
                    let theirs = value.get(tag).and_then(|v| v.as_str());
                    let ours = base
                        .get(section)
                        .and_then(|t| t.get(tag))
                        .and_then(|v| v.as_str());
                    theirs.is_some() && theirs != ours
                }
            });
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) if !replace => {
                merge_at(b, o, false)
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_parse_and_have_unique_names() {
        let mut names = names();
        for p in presets() {
            p.table();
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), presets().len());
    }

    #[test]
    fn file_keys_override_preset_keys_and_other_variants_replace() {
        let mut base = find("bfc").unwrap().table();
        let over: toml::Table =
            toml::from_str("[switch]\nbuffer = \"6MB\"\n[flow_control]\nsampling = 0.5\n").unwrap();
        merge(&mut base, over);
        assert_eq!(base["switch"]["queues_per_port"].as_integer(), Some(32));
        assert_eq!(base["switch"]["buffer"].as_str(), Some("6MB"));
        assert_eq!(base["flow_control"]["kind"].as_str(), Some("bfc"));
        assert_eq!(base["flow_control"]["sampling"].as_float(), Some(0.5));
        let over: toml::Table = toml::from_str("[cc]\nname = \"dctcp\"\ng = 0.1\n").unwrap();
        let mut base = find("bfc-nic-unaware").unwrap().table();
        merge(&mut base, over);
        assert!(
            base["cc"].get("window").is_none(),
            "dctcp has no window key"
        );
        assert_eq!(
            find("ideal-fq").unwrap().tag("flow_control").as_deref(),
            Some("bfc")
        );
    }
}
